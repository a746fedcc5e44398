// `recompdiag bench overhead --instructions`: see bench_instructions.h.

#include "cli/bench_instructions.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "detail/process.h"
#include "recompdiag/core/error.h"
#include "recompdiag/probes/torch_profiler.h"
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

extern char** environ;

namespace recompdiag::trainer::cli {

namespace {

constexpr std::array<const char*, 5> kArms = {"off", "full", "counted", "sampled", "profiler"};
constexpr const char* kProfilerArm = "profiler";

// The arms this build runs: the profiler's only where LibTorch has it.
std::vector<std::string> runnable_arms() {
  std::vector<std::string> out;
  for (const char* arm : kArms) {
    if (arm != std::string(kProfilerArm) || probes::TorchProfiler::available()) out.push_back(arm);
  }
  return out;
}

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

}  // namespace

bool is_instruction_arm(const std::string& name) {
  for (const std::string& arm : runnable_arms()) {
    if (name == arm) return true;
  }
  return false;
}

std::string instruction_arm_names() {
  std::string out;
  for (const std::string& arm : runnable_arms()) out += (out.empty() ? "" : ", ") + arm;
  return out;
}

const probes::MonitorOptions* arm_options(const std::string& arm,
                                          const probes::MonitorOptions& full,
                                          const probes::MonitorOptions& counted,
                                          const probes::MonitorOptions& sampled) {
  if (arm == "full") return &full;
  if (arm == "counted") return &counted;
  if (arm == "sampled") return &sampled;
  return nullptr;
}

void run_instruction_arm(TwoPhaseTrainer& trainer, const std::string& arm,
                         const probes::MonitorOptions* monitor, const InstructionBench& bench) {
  const int every = std::max(1, bench.sample_every);
  const int short_steps = round_up(std::max(1, bench.short_steps), every);
  const int long_steps = short_steps + round_up(std::max(1, bench.counted_steps), every);
  const bool profiler = arm == kProfilerArm;
  trainer.time_steps(bench.warmup_steps, nullptr);
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

void print_instruction_counts(const InstructionBench& bench) {
  const std::string valgrind = find_on_path("valgrind");
  if (valgrind.empty()) {
    throw InputError("--instructions needs valgrind on the PATH (apt-get install valgrind)");
  }
  std::vector<std::string> args = detail::own_command_line();
  if (args.empty()) throw std::runtime_error("cannot read /proc/self/cmdline");
  std::string tmpl = (std::filesystem::temp_directory_path() / "recompdiag_callgrind_XXXXXX");
  if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a temporary directory");
  const std::string dir = tmpl;
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();

  const std::vector<std::string> arms = runnable_arms();
  std::vector<pid_t> children;
  for (const std::string& arm : arms) {
    std::vector<std::string> argv = {valgrind, "--tool=callgrind", "--collect-atstart=no",
                                     "--callgrind-out-file=" + dir + "/" + arm + ".out",
                                     self.empty() ? args[0] : self};
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] != "--instructions") argv.push_back(args[i]);
    }
    argv.push_back("--callgrind-arm");
    argv.push_back(arm);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    // The child's stdout and stderr (valgrind's banner) go to a log in the temporary directory.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = dir + "/" + arm + ".log";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start valgrind");
    children.push_back(pid);
  }
  bool failed = false;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed) throw std::runtime_error("a callgrind arm failed; see the logs in " + dir);

  const int every = std::max(1, bench.sample_every);
  const int counted = round_up(std::max(1, bench.counted_steps), every);
  std::printf(
      "instructions per step under callgrind (1 intra-op thread, %d counted steps per arm, "
      "dispatcher 1/%d in the sampled arm):\n",
      counted, every);
  std::printf("%-28s %16s %10s\n", "arm", "instr/step", "ratio");
  double base = 0.0;
  for (const std::string& arm : arms) {
    const std::string out = dir + "/" + arm + ".out";
    // Each dump holds what ran since the previous one: the profiler's arm dumps its steps and
    // its stop apart (.1 .2 short, .3 .4 long), the others their steps (.1 short, .2 long).
    const bool profiler = arm == kProfilerArm;
    const double per_step =
        (read_total(out + (profiler ? ".3" : ".2")) - read_total(out + ".1")) / counted;
    if (base == 0.0) base = per_step;
    std::printf("%-28s %16.0f %10.4f\n", arm.c_str(), per_step, per_step / base);
    if (profiler) {
      const double stop = (read_total(out + ".4") - read_total(out + ".2")) / counted;
      std::printf("%-28s %16.0f %10.4f  (its stop's event post-processing, per step)\n",
                  "profiler + its stop", per_step + stop, (per_step + stop) / base);
    }
  }
  std::printf("profiles of the long blocks: callgrind_annotate %s/<arm>.out.2 (profiler: .3)\n",
              dir.c_str());
}

}  // namespace recompdiag::trainer::cli
