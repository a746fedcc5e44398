// `recompdiag bench compare`: how long `compare` takes on two million-step runs, and its memory.
// The bench is library code (recompdiag/trainer/compare_bench.h); this file prints it.

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "recompdiag/runner/compare_bench.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::runner::cli {

namespace {

struct BenchCompareCommand {
  CompareBenchOptions options;
  std::vector<int64_t> sweep;  ///< Steps per run of each round, each in a fresh process.
  std::string json;            ///< Where the result goes as JSON ("-": stdout, instead of text).
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void print(const CompareBenchResult& r) {
  using R = CompareBenchResult;
  std::cout << "recompdiag bench compare: 2 runs x " << r.steps << " steps (2 phases), "
            << fixed(r.file_mb, 1) << " MB of run files in " << r.dir << "\n"
            << "  generate both runs (not in the total):  " << fixed(r.generate_s, 2) << " s\n"
            << "  read both run files (2 threads):        " << fixed(r.read_s, 3) << " s ("
            << fixed(r.file_mb / r.read_s, 0) << " MB/s)\n"
            << "  compare (analysis, bootstrap, MWU):     " << fixed(r.compare_s, 3) << " s\n"
            << "  render md / html / json:                " << fixed(r.render_s[0], 4) << " / "
            << fixed(r.render_s[1], 4) << " / " << fixed(r.render_s[2], 4) << " s ("
            << r.render_bytes[0] << " / " << r.render_bytes[1] << " / " << r.render_bytes[2]
            << " bytes)\n"
            << "  total read + compare + render:          " << fixed(r.total_s, 3)
            << " s (target < " << fixed(R::kTargetSeconds, 1)
            << " s: " << (r.time_target_met() ? "met" : "MISSED") << ")\n"
            << "  read both again (" << (r.column_cache ? "column cache" : "cache off, parsed")
            << "):     " << fixed(r.cached_read_s, 3) << " s; total with it "
            << fixed(r.cached_total_s, 3) << " s\n"
            << "  CPU time of the timed part (user+sys):  " << fixed(r.cpu_s, 3) << " s on "
            << r.cores << " cores; load average before: "
            << (r.load_before ? fixed(*r.load_before, 2) : std::string("n/a")) << "\n"
            << "  peak RSS: " << fixed(r.peak_mib, 0) << " MiB (" << fixed(r.rss_before_mib, 0)
            << " MiB before reading, " << fixed(r.read_peak_mib, 0) << " MiB after reading)\n"
            << "  resident bytes per step:                " << fixed(r.bytes_per_step, 1)
            << " (peak RSS - RSS before reading) / " << 2 * r.steps
            << " steps (target <= " << fixed(R::kTargetBytesPerStep, 0) << ": "
            << (r.memory_target_met() ? "met" : "MISSED") << ")\n"
            << "  step columns:                           " << fixed(r.column_bytes_per_step, 1)
            << " bytes per step held by the two runs' columns\n"
            << "  verdict: " << r.verdict << "\n";
}

void print_sweep(const std::vector<CompareBenchResult>& rounds) {
  std::cout
      << "\nsweep (2 runs per round; seconds of read + compare + render, wall and CPU):\n"
      << "  steps per run    wall s    CPU s   bytes/step   peak RSS MiB   column bytes/step\n";
  for (const CompareBenchResult& r : rounds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %13lld %9.3f %8.3f %12.1f %14.0f %19.1f\n",
                  static_cast<long long>(r.steps), r.total_s, r.cpu_s, r.bytes_per_step, r.peak_mib,
                  r.column_bytes_per_step);
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
  cmd->add_option("--steps", state->options.steps, "Steps per run")->capture_default_str();
  cmd->add_option("--dir", state->options.dir,
                  "Directory for the run files (default: a fresh temporary one)");
  cmd->add_flag("--keep", state->options.keep, "Keep the generated run files");
  cmd->add_option("--sweep", state->sweep,
                  "Run the bench once per value (steps per run, e.g. 100000,1000000,10000000), "
                  "each in a fresh process, and tabulate time and bytes per step")
      ->delimiter(',');
  add_bench_json_flag(*cmd, state->json);
  cmd->callback([state, &ctx] {
    const BenchCompareCommand& s = *state;
    if (!s.sweep.empty()) {
      const std::vector<CompareBenchResult> rounds =
          run_compare_bench_sweep(s.sweep, {own_executable(), "bench", "compare"});
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const CompareBenchResult& r : rounds) {
        if (s.json != "-") print(r);
        all.push_back(r.to_json());
      }
      if (s.json != "-") print_sweep(rounds);
      if (!s.json.empty()) write_bench_json(s.json, all);
    } else {
      const CompareBenchResult r = run_compare_bench(s.options);
      if (s.json != "-") print(r);
      if (!s.json.empty()) write_bench_json(s.json, r.to_json());
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::runner::cli
