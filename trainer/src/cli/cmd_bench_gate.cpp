// `recompdiag bench gate`: the gate's false verdicts on healthy pairs and its detection of a known
// slowdown, with one run and several runs per side, next to the step-level test's.

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/trainer/gate_bench.h"

namespace recompdiag::trainer::cli {

namespace {

struct BenchGate {
  TrainFlags flags;
  GateBenchOptions options;
  std::string levels = "5,10,20";
  double threshold_pct = 5.0;
  double run_noise_pct = 3.0;
  std::string json;
  std::string baseline_json;
};

void print_rates(const GateBenchResult& r, const GateRates& rates, const char* title) {
  std::printf("%s\n", title);
  std::printf(
      "  false verdicts on healthy pairs: %5.1f%% (1 run per side, %d pairs)  %5.1f%% "
      "(%d runs per side, %d pairs)\n",
      rates.false_verdict_1 * 100.0, r.single_pairs, rates.false_verdict_k * 100.0, r.runs,
      r.pairs);
  std::printf("  inconclusive on healthy pairs:   %5.1f%%                          %5.1f%%\n",
              rates.inconclusive_1 * 100.0, rates.inconclusive_k * 100.0);
  for (size_t i = 0; i < r.levels.size(); ++i) {
    std::printf("  extra-work=%-4g detected:        %5.1f%%                          %5.1f%%\n",
                r.levels[i], rates.detection_1[i] * 100.0, rates.detection_k[i] * 100.0);
  }
}

}  // namespace

void add_bench_gate_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchGate>();
  // The bench's small scenario is the default; every train flag can change it.
  state->flags.epochs = "6,3";
  state->flags.config = state->options.config;
  CLI::App* cmd = bench.add_subcommand(
      "gate",
      "False regression/improvement verdicts of `compare` on healthy independent pairs of runs "
      "(trained one after the other, as a CI would) and detection of the extra-work fault, with "
      "one run and several runs per side; and the same for the step-level test (the baseline)");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--pairs", state->options.pairs, "Trials (pairs of sides)")
      ->capture_default_str();
  cmd->add_option("--runs", state->options.runs, "Runs per side for the run-as-unit figures")
      ->capture_default_str();
  cmd->add_option("--levels", state->levels, "Extra-work percentages whose detection is measured")
      ->capture_default_str();
  cmd->add_option("--threshold", state->threshold_pct, "The gate's threshold in percent")
      ->capture_default_str();
  cmd->add_option("--run-noise", state->run_noise_pct,
                  "The gate's assumed run-to-run spread for one run per side, percent")
      ->capture_default_str();
  cmd->add_option("--out-dir", state->options.out_dir, "Directory for the run files")
      ->capture_default_str();
  cmd->add_option("--json", state->json, "Write the gate's figures to FILE as JSON");
  cmd->add_option("--baseline-json", state->baseline_json,
                  "Write the step-level baseline's figures to FILE, in the same shape");
  cmd->callback([state, &ctx] {
    BenchGate& s = *state;
    if (wants_fault_list(s.flags)) throw InputError("bench gate takes no --fault");
    GateBenchOptions o = s.options;
    o.config = to_config(s.flags);
    o.config.log_alerts = false;
    o.levels = parse_number_list(s.levels, "--levels");
    o.compare.threshold = s.threshold_pct / 100.0;
    o.compare.run_noise = s.run_noise_pct / 100.0;
    o.quiet = s.flags.quiet;
    o.validate();
    const GateBenchResult r = run_gate_bench(o);
    std::printf(
        "bench gate: %d trials; each %d healthy A runs, %d healthy B runs and %d runs per "
        "extra-work level, trained one after the other; threshold %.1f%%, alpha %g; "
        "%.0f s\n",
        r.pairs, r.runs, r.runs, r.runs, s.threshold_pct, o.compare.alpha, r.seconds);
    print_rates(r, r.gate, "the gate (runs as the unit; block bootstrap for one run; TOST, Holm):");
    print_rates(r, r.step_level,
                "baseline, the step-level test (steps as independent samples, runs pooled):");
    for (size_t i = 0; i < r.levels.size(); ++i) {
      std::printf("measured cost of extra-work=%g: phase 1 B/A %.3f (median over trials)\n",
                  r.levels[i], r.measured_slowdown[i]);
    }
    std::printf(
        "run-to-run spread of phase 1's steady median among healthy runs: %.1f%% (compare "
        "--run-noise assumed %.1f%%)\n",
        r.run_spread * 100.0, s.run_noise_pct);
    std::cout << r.to_json().dump() << "\n";
    if (!s.json.empty()) reports::write_file_atomically(s.json, r.to_json().dump(2) + "\n");
    if (!s.baseline_json.empty()) {
      reports::write_file_atomically(s.baseline_json, r.to_json(true).dump(2) + "\n");
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
