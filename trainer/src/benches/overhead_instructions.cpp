// The overhead bench in instructions: each arm in a child under valgrind's callgrind.
//
// The parent starts one child per arm under
//   valgrind --tool=callgrind --collect-atstart=no ... --callgrind-arm NAME
// and each child trains its warm-up, then counts a short and a long block of steps (each with a
// fresh monitor, as the wall-clock arms do), dumping the counters after each. Instructions per
// step are (long - short) / (long steps - short steps): the monitor's construction and its first
// steps cancel out. Unlike wall-clock time, the count does not move with the load of a shared
// machine.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "recompdiag/core/error.h"
#include "recompdiag/probes/torch_profiler.h"
#include "recompdiag/runner/bench_json.h"
#include "recompdiag/runner/process.h"
#include "recompdiag/trainer/overhead_bench.h"
#include "recompdiag/trainer/trainer.h"

// valgrind's client requests are macros that cost a few no-op instructions outside valgrind; the
// header ships with valgrind itself, so a machine without it builds the requests as nothing.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define RECOMPDIAG_CALLGRIND_DUMP(name) CALLGRIND_DUMP_STATS_AT(name)
#define RECOMPDIAG_CALLGRIND_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#else
#define RECOMPDIAG_CALLGRIND_DUMP(name) ((void)0)
#define RECOMPDIAG_CALLGRIND_TOGGLE() ((void)0)
#endif

namespace recompdiag::trainer {

namespace {

constexpr std::array<const char*, 6> kArms = {
    "off", "full", "counted", "counted-record-function", "sampled", "profiler"};
constexpr std::string_view kProfilerArm = "profiler";

int round_up(int n, int multiple) { return (n + multiple - 1) / multiple * multiple; }

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return {};
}

// The "totals:" (or "summary:") line of a callgrind output file: instructions executed.
double read_total(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("callgrind wrote no " + path);
  std::string line;
  double summary = -1.0;
  while (std::getline(in, line)) {
    if (line.rfind("totals:", 0) == 0) return std::stod(line.substr(7));
    if (line.rfind("summary:", 0) == 0) summary = std::stod(line.substr(8));
  }
  if (summary < 0) throw std::runtime_error("no totals in " + path);
  return summary;
}

std::string arm_list() {
  std::string out;
  for (const std::string& arm : instruction_arms()) out += (out.empty() ? "" : ", ") + arm;
  return out;
}

}  // namespace

int InstructionBenchOptions::short_block() const {
  return round_up(std::max(1, short_steps), std::max(1, sample_every));
}

int InstructionBenchOptions::counted_block() const {
  return round_up(std::max(1, counted_steps), std::max(1, sample_every));
}

void InstructionBenchOptions::validate() const {
  if (counted_steps < 1) throw InputError("--instruction-steps must be >= 1");
  if (warmup_steps < 0 || short_steps < 1 || sample_every < 1) {
    throw InputError("the instruction bench needs warm-up >= 0, short steps >= 1, sampling >= 1");
  }
}

std::vector<std::string> instruction_arms() {
  std::vector<std::string> out;
  for (const char* arm : kArms) {
    if (arm != kProfilerArm || probes::TorchProfiler::available()) out.push_back(arm);
  }
  return out;
}

void check_instruction_arm(const std::string& name) {
  const std::vector<std::string> arms = instruction_arms();
  if (std::find(arms.begin(), arms.end(), name) == arms.end()) {
    throw InputError("--callgrind-arm must be one of " + arm_list() + ", got '" + name + "'");
  }
}

void run_instruction_arm(TwoPhaseTrainer& trainer, const std::string& arm,
                         const InstructionBenchOptions& o) {
  check_instruction_arm(arm);
  const OverheadMonitorSetups setups(o.sample_every);
  const probes::MonitorOptions* monitor = arm == "full"      ? &setups.full
                                          : arm == "counted" ? &setups.counted
                                          : arm == "counted-record-function"
                                              ? &setups.counted_record_function
                                          : arm == "sampled" ? &setups.sampled
                                                             : nullptr;
  const int short_steps = o.short_block();
  const int long_steps = short_steps + o.counted_block();
  const bool profiler = arm == kProfilerArm;
  trainer.time_steps(o.warmup_steps, nullptr);
  // A monitor's one-time setup (the mode key's fallbacks, registered once per process: about
  // 5.8M instructions on LibTorch 1.13) would fall in the short block only and count against the
  // arm, 0.17% of a step.
  if (monitor != nullptr) trainer.time_steps(2, monitor);
  if (profiler) {
    // The profiler's one-time setup would fall in the short block only and not cancel.
    probes::TorchProfiler warm;
    trainer.time_steps(2, nullptr);
  }
  RECOMPDIAG_CALLGRIND_TOGGLE();
  for (const int steps : {short_steps, long_steps}) {
    std::optional<probes::TorchProfiler> session;
    if (profiler) session.emplace();
    trainer.time_steps(steps, monitor);
    RECOMPDIAG_CALLGRIND_DUMP("steps");
    if (session) {
      session->stop();
      RECOMPDIAG_CALLGRIND_DUMP("stop");
    }
  }
  RECOMPDIAG_CALLGRIND_TOGGLE();
}

InstructionBenchResult run_instruction_bench(const InstructionBenchOptions& o,
                                             const std::vector<std::string>& arm_command) {
  o.validate();
  const std::string valgrind = find_on_path("valgrind");
  if (valgrind.empty()) {
    throw InputError("--instructions needs valgrind on the PATH (apt-get install valgrind)");
  }
  if (arm_command.empty()) throw std::invalid_argument("run_instruction_bench: no arm command");
  InstructionBenchResult result;
  result.options = o;
  result.profile_dir = runner::make_temp_dir("recompdiag_callgrind_");
  const std::string& dir = result.profile_dir;

  const std::vector<std::string> arms = instruction_arms();
  std::vector<pid_t> children;
  for (const std::string& arm : arms) {
    std::vector<std::string> argv = {valgrind, "--tool=callgrind", "--collect-atstart=no",
                                     "--callgrind-out-file=" + dir + "/" + arm + ".out"};
    argv.insert(argv.end(), arm_command.begin(), arm_command.end());
    argv.push_back("--callgrind-arm");
    argv.push_back(arm);
    // The child's stdout and stderr (valgrind's banner) go to a log beside its profile.
    children.push_back(runner::spawn_logged(argv, dir + "/" + arm + ".log"));
  }
  bool failed = false;
  for (pid_t pid : children) {
    const int status = runner::wait_process(pid);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed) throw std::runtime_error("a callgrind arm failed; see the logs in " + dir);

  const int counted = o.counted_block();
  double base = 0.0;
  for (const std::string& arm : arms) {
    const std::string out = dir + "/" + arm + ".out";
    // Each dump holds what ran since the previous one: the profiler's arm dumps its steps and
    // its stop apart (.1 .2 short, .3 .4 long), the others their steps (.1 short, .2 long).
    const bool profiler = arm == kProfilerArm;
    InstructionArm row;
    row.name = arm;
    row.per_step = (read_total(out + (profiler ? ".3" : ".2")) - read_total(out + ".1")) / counted;
    if (base == 0.0) base = row.per_step;
    row.ratio = row.per_step / base;
    if (profiler) {
      row.with_stop_per_step =
          row.per_step + (read_total(out + ".4") - read_total(out + ".2")) / counted;
    }
    result.arms.push_back(row);
  }
  return result;
}

nlohmann::ordered_json InstructionBenchResult::to_json() const {
  nlohmann::ordered_json j = runner::bench_json_head("overhead-instructions");
  j["options"] = {{"warmup_steps", options.warmup_steps},
                  {"short_steps", options.short_block()},
                  {"counted_steps", options.counted_block()},
                  {"sample_every", options.sample_every},
                  {"threads", 1}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const InstructionArm& a : arms) {
    nlohmann::ordered_json row = {{"name", a.name}, {"per_step", a.per_step}, {"ratio", a.ratio}};
    if (a.with_stop_per_step) row["with_stop_per_step"] = *a.with_stop_per_step;
    rows.push_back(row);
  }
  j["arms"] = rows;
  j["profile_dir"] = profile_dir;
  return j;
}

}  // namespace recompdiag::trainer
