// `recompdiag bench gate`: the gate's false verdicts on healthy pairs and its detection of a known
// slowdown, with one run and several runs per side, next to the step-level test's.

#include <cstdio>
#include <iostream>

#include "cli/command_line.h"
#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
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
  bool no_turns = false;
  std::string json;
  std::string baseline_json;
};

// One line per mode: what a healthy pair and each extra-work level got.
void print_mode(const GateBenchResult& r, const char* mode, int n, double false_rate,
                double inconclusive_rate, const std::vector<double>& detection) {
  std::printf("  %-36s %5d  %6.1f%%  %6.1f%%", mode, n, false_rate * 100.0,
              inconclusive_rate * 100.0);
  for (size_t i = 0; i < r.levels.size(); ++i) std::printf("  %7.1f%%", detection[i] * 100.0);
  std::printf("\n");
}

void print_rates(const GateBenchResult& r, const GateRates& rates, const char* title, bool gate) {
  std::printf("%s\n  %-36s %5s  %7s  %7s", title, "mode", "pairs", "false", "inconcl");
  for (double l : r.levels) std::printf("  xw=%-5g", l);
  std::printf("\n");
  print_mode(r, "1 run per side", r.single_pairs, rates.false_verdict_1, rates.inconclusive_1,
             rates.detection_1);
  if (gate && r.noise.runs > 0) {
    print_mode(r, "1 run per side + measured profile", r.single_pairs, rates.false_verdict_profile,
               rates.inconclusive_profile, rates.detection_profile);
  }
  const std::string k = std::to_string(r.runs) + " runs per side";
  print_mode(r, k.c_str(), r.pairs, rates.false_verdict_k, rates.inconclusive_k, rates.detection_k);
  if (gate && r.turn_pairs > 0) {
    print_mode(r, "1 pair taking turns (ab), by step", r.turn_pairs, rates.false_verdict_turns,
               rates.inconclusive_turns, rates.detection_turns);
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
  cmd->add_option("--noise-runs", state->options.noise_runs,
                  "Healthy runs trained first to measure the noise profile the one-run figures "
                  "use (0: none)")
      ->capture_default_str();
  cmd->add_flag("--no-turns", state->no_turns,
                "Leave out the pairs that take turns step by step (as `ab` runs them)");
  cmd->add_option("--out-dir", state->options.out_dir, "Directory for the run files")
      ->capture_default_str();
  cmd->add_option("--json", state->json, "Write the gate's figures to FILE as JSON")
      ->check(writable_file(false));
  cmd->add_option("--baseline-json", state->baseline_json,
                  "Write the step-level baseline's figures to FILE, in the same shape")
      ->check(writable_file(false));
  cmd->callback([state, &ctx] {
    BenchGate& s = *state;
    if (wants_fault_list(s.flags)) throw InputError("bench gate takes no --fault");
    GateBenchOptions o = s.options;
    o.config = to_single_process_config(s.flags, "bench gate");
    o.config.log_alerts = false;
    o.levels = parse_number_list(s.levels, "--levels");
    o.compare.threshold = s.threshold_pct / 100.0;
    o.turns = !s.no_turns;
    o.quiet = s.flags.quiet;
    o.validate();
    const GateBenchResult r = run_gate_bench(o);
    std::printf(
        "bench gate: %d trials; each %d healthy A runs, %d healthy B runs and %d runs per "
        "extra-work level, trained one after the other%s; threshold %.1f%%, alpha %g; %.0f s\n",
        r.pairs, r.runs, r.runs, r.runs,
        r.turn_pairs > 0 ? ", then one pair per group taking turns step by step on one CPU" : "",
        s.threshold_pct, o.compare.alpha, r.seconds);
    print_rates(r, r.gate, "the gate (compare):", true);
    print_rates(
        r, r.step_level,
        "baseline, the step-level test (steps as independent samples, runs pooled):", false);
    for (size_t i = 0; i < r.levels.size(); ++i) {
      std::printf("measured cost of extra-work=%g: phase 1 B/A %.3f (%d runs per side)",
                  r.levels[i], r.measured_slowdown[i], r.runs);
      if (r.turn_pairs > 0) std::printf(", %.3f (turns)", r.measured_slowdown_turns[i]);
      std::printf(" (medians over trials)\n");
    }
    std::printf("run-to-run spread of phase 1's steady median among healthy runs: %.1f%%",
                r.run_spread * 100.0);
    if (r.noise.runs > 0) {
      std::printf("; the profile measured first: %.1f%% over %lld runs", r.noise.run_noise * 100.0,
                  static_cast<long long>(r.noise.runs));
    }
    std::printf("\n");
    std::cout << r.to_json().dump() << "\n";
    if (!s.json.empty()) reports::write_file_atomically(s.json, r.to_json().dump(2) + "\n");
    if (!s.baseline_json.empty()) {
      reports::write_file_atomically(s.baseline_json, r.to_json(true).dump(2) + "\n");
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
