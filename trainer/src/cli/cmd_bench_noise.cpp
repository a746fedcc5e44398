// `recompdiag bench noise`: this machine's run-to-run spread, measured from healthy runs (trained
// here, or stored ones given with --from), written as the noise profile `compare` reads.

#include <cstdio>

#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/noise_profile.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/trainer/noise_bench.h"

namespace recompdiag::trainer::cli {

namespace {

struct BenchNoise {
  TrainFlags flags;
  NoiseBenchOptions options;
  std::vector<std::string> from;
  std::string out = "noise-profile.json";
};

}  // namespace

void add_bench_noise_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchNoise>();
  CLI::App* cmd = bench.add_subcommand(
      "noise",
      "Measure this machine's run-to-run spread: train --runs healthy runs of one config one "
      "after the other (train flags pick the config: the one your gate compares), or read stored "
      "runs (--from), and write the noise profile `compare --noise-profile` reads");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--runs", state->options.runs, "Healthy runs to train (at least 3)")
      ->capture_default_str();
  cmd->add_option("--from", state->from,
                  "Measure stored healthy runs of one config instead of training: files, "
                  "directories of *.jsonl or quoted globs; repeatable");
  cmd->add_option("--out-dir", state->options.out_dir, "Directory for the trained runs' files")
      ->capture_default_str();
  cmd->add_option("--out", state->out, "The noise profile to write")->capture_default_str();
  cmd->callback([state, &ctx] {
    BenchNoise& s = *state;
    if (wants_fault_list(s.flags))
      throw InputError("bench noise measures healthy runs: no --fault");
    NoiseProfile profile;
    if (!s.from.empty()) {
      std::vector<ColumnarRun> runs;
      for (const std::string& path : expand_run_paths(s.from, "--from")) {
        runs.push_back(read_columnar_run(path));
      }
      profile = measure_noise_profile(runs);
    } else {
      NoiseBenchOptions o = s.options;
      o.config = to_single_process_config(s.flags, "bench noise");
      if (!o.config.faults.empty())
        throw InputError("bench noise measures healthy runs: no --fault");
      o.config.log_alerts = false;
      o.quiet = s.flags.quiet;
      profile = run_noise_bench(o);
    }
    write_noise_profile(profile, s.out);
    std::printf("bench noise: %lld runs; run-to-run spread of the steady median:",
                static_cast<long long>(profile.runs));
    for (const PhaseNoise& p : profile.phases) {
      std::printf(" phase %d %.1f%%", p.phase, p.spread * 100.0);
    }
    std::printf("; compare uses %.1f%% (%lld degrees of freedom); wrote %s\n",
                profile.run_noise * 100.0, static_cast<long long>(profile.degrees_of_freedom),
                s.out.c_str());
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
