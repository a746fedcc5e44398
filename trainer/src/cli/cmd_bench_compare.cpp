// `recompdiag bench compare`: how long `compare` takes on two million-step runs, and its memory.

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/run_set.h"
#include "detail/process.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/reports/renderer.h"

namespace recompdiag::trainer::cli {

namespace {

// Issue 12's targets for 2 x 1,000,000 steps.
constexpr double kTargetSeconds = 1.5;
constexpr double kTargetBytesPerStep = 128.0;

struct BenchCompareCommand {
  int64_t steps = 1000000;
  std::string dir;
  bool keep = false;
  std::vector<int64_t> sweep;  ///< Steps per run of each round, each in a fresh process.
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mib() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// User plus system CPU seconds of this process so far: unlike wall time, barely moved by other
// processes competing for the cores.
double cpu_seconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void run_bench(const BenchCompareCommand& s) {
  if (s.steps < 4) throw InputError("--steps must be at least 4, got " + std::to_string(s.steps));
  std::string dir = s.dir;
  if (dir.empty()) {
    dir = detail::make_temp_dir("recompdiag_bench_");
  } else {
    std::filesystem::create_directories(dir);
  }
  const std::string path_a = dir + "/bench_a.jsonl";
  const std::string path_b = dir + "/bench_b.jsonl";

  // Two realistic runs: every step carries the dispatch, jit, optimizer and placement sections,
  // with the recompile tax at the switch; B's phase 2 is 3% slower.
  SyntheticRunOptions oa;
  oa.phase_steps = {s.steps / 2, s.steps - s.steps / 2};
  oa.seed = 1;
  SyntheticRunOptions ob = oa;
  ob.seed = 2;
  ob.phase_scale = {1.0, 1.03};
  auto t0 = std::chrono::steady_clock::now();
  auto gen_b = std::async(std::launch::async, [&] { write_synthetic_run(path_b, ob); });
  write_synthetic_run(path_a, oa);
  gen_b.get();
  const double generate_s = seconds_since(t0);
  const double file_mb =
      static_cast<double>(std::filesystem::file_size(path_a) + std::filesystem::file_size(path_b)) /
      1e6;
  const double rss_before_mib = peak_rss_mib();

  // What `recompdiag compare` does, through its own reader: read both sides at once, compare,
  // render.
  double load[1] = {0.0};
  const bool have_load = ::getloadavg(load, 1) == 1;
  const double cpu0 = cpu_seconds();
  t0 = std::chrono::steady_clock::now();
  const auto [runs_a, runs_b] = read_columnar_sides({path_a}, {path_b});
  const ColumnarRun& a = runs_a[0];
  const ColumnarRun& b = runs_b[0];
  const double read_s = seconds_since(t0);
  const double read_peak_mib = peak_rss_mib();
  const double column_bytes = static_cast<double>(a.steps.memory_bytes() + b.steps.memory_bytes());

  t0 = std::chrono::steady_clock::now();
  const Comparison c = compare_runs(a, b);
  const double compare_s = seconds_since(t0);

  double render_s[3] = {0, 0, 0};
  size_t render_bytes[3] = {0, 0, 0};
  const reports::ReportFormat formats[] = {
      reports::ReportFormat::kMarkdown, reports::ReportFormat::kHtml, reports::ReportFormat::kJson};
  for (int i = 0; i < 3; ++i) {
    t0 = std::chrono::steady_clock::now();
    std::ostringstream out;
    reports::make_renderer(formats[i])->render(c, out);
    render_s[i] = seconds_since(t0);
    render_bytes[i] = out.str().size();
  }
  const double total_s = read_s + compare_s + render_s[0] + render_s[1] + render_s[2];
  const double cpu_s = cpu_seconds() - cpu0;
  const double peak_mib = peak_rss_mib();
  const auto total_steps = static_cast<double>(a.steps.size() + b.steps.size());
  const double bytes_per_step = (peak_mib - rss_before_mib) * 1024.0 * 1024.0 / total_steps;

  std::cout << "recompdiag bench compare: 2 runs x " << s.steps << " steps (2 phases), "
            << fixed(file_mb, 1) << " MB of run files in " << dir << "\n"
            << "  generate both runs (not in the total):  " << fixed(generate_s, 2) << " s\n"
            << "  read both run files (2 threads):        " << fixed(read_s, 3) << " s ("
            << fixed(file_mb / read_s, 0) << " MB/s)\n"
            << "  compare (analysis, bootstrap, MWU):     " << fixed(compare_s, 3) << " s\n"
            << "  render md / html / json:                " << fixed(render_s[0], 4) << " / "
            << fixed(render_s[1], 4) << " / " << fixed(render_s[2], 4) << " s (" << render_bytes[0]
            << " / " << render_bytes[1] << " / " << render_bytes[2] << " bytes)\n"
            << "  total read + compare + render:          " << fixed(total_s, 3) << " s (target < "
            << fixed(kTargetSeconds, 1) << " s: " << (total_s < kTargetSeconds ? "met" : "MISSED")
            << ")\n"
            << "  CPU time of the timed part (user+sys):  " << fixed(cpu_s, 3) << " s on "
            << std::thread::hardware_concurrency() << " cores; load average before: "
            << (have_load ? fixed(load[0], 2) : std::string("n/a")) << "\n"
            << "  peak RSS: " << fixed(peak_mib, 0) << " MiB (" << fixed(rss_before_mib, 0)
            << " MiB before reading, " << fixed(read_peak_mib, 0) << " MiB after reading)\n"
            << "  resident bytes per step:                " << fixed(bytes_per_step, 1)
            << " (peak RSS - RSS before reading) / " << static_cast<int64_t>(total_steps)
            << " steps (target <= " << fixed(kTargetBytesPerStep, 0) << ": "
            << (bytes_per_step <= kTargetBytesPerStep ? "met" : "MISSED") << ")\n"
            << "  step columns:                           " << fixed(column_bytes / total_steps, 1)
            << " bytes per step held by the two runs' columns\n"
            << "  verdict: " << c.summary
            << "\n"
            // One line for --sweep to collect.
            << "  sweep: " << s.steps << " " << fixed(total_s, 3) << " " << fixed(cpu_s, 3) << " "
            << fixed(bytes_per_step, 1) << " " << fixed(peak_mib, 0) << " "
            << fixed(column_bytes / total_steps, 1) << "\n";
  if (!s.keep) std::filesystem::remove_all(dir);
}

// Runs the bench once per entry of --sweep, each in a fresh process (this executable again) so
// that each round's peak RSS is its own, relays what each prints, then tabulates the rounds.
void run_sweep(const BenchCompareCommand& s) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw InputError("cannot find this executable (/proc/self/exe) to run the sweep");
  exe[n] = '\0';
  std::vector<std::string> rows;
  for (int64_t steps : s.sweep) {
    if (steps < 4)
      throw InputError("--sweep: steps must be at least 4, got " + std::to_string(steps));
    const std::string command =
        "'" + std::string(exe) + "' bench compare --steps " + std::to_string(steps);
    std::cout.flush();
    FILE* child = ::popen(command.c_str(), "r");
    if (child == nullptr) throw InputError("cannot start " + command);
    char line[4096];
    while (std::fgets(line, sizeof line, child) != nullptr) {
      const std::string text(line);
      std::cout << text;
      const auto at = text.find("  sweep: ");
      if (at != std::string::npos) rows.push_back(text.substr(at + 9));
    }
    std::cout.flush();
    if (::pclose(child) != 0)
      throw InputError("the round of " + std::to_string(steps) + " steps failed");
  }
  std::cout
      << "\nsweep (2 runs per round; seconds of read + compare + render, wall and CPU):\n"
      << "  steps per run    wall s    CPU s   bytes/step   peak RSS MiB   column bytes/step\n";
  for (const std::string& r : rows) {
    std::istringstream in(r);
    std::string steps, wall, cpu, bytes, peak, columns;
    in >> steps >> wall >> cpu >> bytes >> peak >> columns;
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %13s %9s %8s %12s %14s %19s\n", steps.c_str(), wall.c_str(),
                  cpu.c_str(), bytes.c_str(), peak.c_str(), columns.c_str());
    std::cout << buf;
  }
}

}  // namespace

void add_bench_compare_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchCompareCommand>();
  CLI::App* cmd = bench.add_subcommand(
      "compare",
      "Generate two synthetic runs (real run files with probe sections) and time reading, "
      "comparing and rendering them; prints seconds and peak memory");
  cmd->add_option("--steps", state->steps, "Steps per run")->capture_default_str();
  cmd->add_option("--dir", state->dir,
                  "Directory for the run files (default: a fresh temporary one)");
  cmd->add_flag("--keep", state->keep, "Keep the generated run files");
  cmd->add_option("--sweep", state->sweep,
                  "Run the bench once per value (steps per run, e.g. 100000,1000000,10000000), "
                  "each in a fresh process, and tabulate time and bytes per step")
      ->delimiter(',');
  cmd->callback([state, &ctx] {
    if (!state->sweep.empty()) {
      run_sweep(*state);
      ctx.exit_code = 0;
      return;
    }
    run_bench(*state);
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
