#pragma once
/// \file
/// The gate's error rates, measured (`recompdiag bench gate`): how often `compare` calls healthy
/// pairs of runs a regression or an improvement, and how often it catches a known slowdown (the
/// extra-work fault at a few percentages), in every mode a CI can use: one independent run per
/// side (with no measured spread, and with the noise profile the bench measures first), several
/// independent runs per side, and one pair of runs that take turns step by step (`ab`); and the
/// same figures for the step-level test compare used before (the baseline).
///
///     GateBenchOptions options;
///     options.pairs = 2;
///     options.out_dir = "gate-bench";
///     GateBenchResult result = run_gate_bench(options);
///     nlohmann::json figures = result.to_json();

#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/noise_profile.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

/// Settings of run_gate_bench(). Plain data.
struct GateBenchOptions {
  /// The healthy run's config; the faulty runs add extra-work. Default: a small scenario that
  /// trains in about two seconds on 2 CPU cores.
  TrainConfig config = [] {
    TrainConfig c;
    c.mode = TrainMode::kMutable;
    c.phases = {{6, {0.7, 0.3}, 0.01}, {3, {0.99, 0.01}, 0.001}};
    c.batch_size = 16;
    c.seq_len = 12;
    c.log_alerts = false;
    return c;
  }();
  /// Trials. Each trains `runs` healthy A runs, `runs` healthy B runs and `runs` runs per
  /// level, one group after the other in turn (sequential, as a CI would: no epoch-by-epoch
  /// interleaving).
  int pairs = 10;
  /// Runs per side for the run-as-unit figures (>= 2); the one-run figures pair A_i with B_i.
  int runs = 3;
  /// Extra-work percentages whose detection is measured.
  std::vector<double> levels = {5, 10, 20};
  /// Healthy runs trained before the trials to measure this machine's noise profile (bench
  /// noise), which the one-run-with-profile figures use; 0 leaves those figures out.
  int noise_runs = 5;
  /// Also train, per trial, one healthy pair and one pair per level taking turns step by step
  /// (as `recompdiag ab` does), compared paired by epoch.
  bool turns = true;
  /// The gate's settings (threshold, alpha, ...), also used by the step-level baseline.
  CompareOptions compare;
  /// Where run files go (created; reused trial by trial).
  std::string out_dir = "recompdiag-bench-gate";
  bool quiet = false;  ///< No progress line per trial.

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// Rates of one method (the gate, or the step-level baseline).
struct GateRates {
  double false_verdict_1 = 0.0;  ///< Regression or improvement on healthy one-run pairs.
  double false_verdict_k = 0.0;  ///< The same with `runs` runs per side.
  double inconclusive_1 = 0.0;   ///< Healthy one-run pairs called inconclusive.
  double inconclusive_k = 0.0;
  std::vector<double> detection_1;  ///< Per level: regression verdicts, one run per side.
  std::vector<double> detection_k;  ///< Per level, `runs` per side.
  /// One independent run per side judged with the bench's measured noise profile
  /// (GateBenchOptions::noise_runs > 0; the gate only).
  double false_verdict_profile = 0.0;
  double inconclusive_profile = 0.0;
  std::vector<double> detection_profile;
  /// One pair taking turns step by step, paired turn by turn (GateBenchOptions::turns; the gate
  /// only).
  double false_verdict_turns = 0.0;
  double inconclusive_turns = 0.0;
  std::vector<double> detection_turns;
};

/// What run_gate_bench() measured.
struct GateBenchResult {
  int pairs = 0;         ///< Trials.
  int runs = 0;          ///< Runs per side in the run-as-unit figures.
  int single_pairs = 0;  ///< One-run pairs per rate (pairs x runs).
  int turn_pairs = 0;    ///< Turn-taking pairs per rate (one per trial; 0 when not measured).
  std::vector<double> levels;
  GateRates gate;        ///< compare as it is now.
  GateRates step_level;  ///< Steps as independent samples (bootstrap + Mann-Whitney), as before.
  /// Per level: median over the trials of the measured B / A of phase 1's steady medians
  /// (runs as the unit): what the fault really cost.
  std::vector<double> measured_slowdown;
  /// Run-to-run spread of phase 1's steady median among healthy runs of one group (pooled
  /// standard deviation of the logs) over all trials.
  double run_spread = 0.0;
  /// The noise profile measured before the trials (runs == 0 when none was).
  NoiseProfile noise;
  /// Per level: median over the trials of B / A of phase 1 in the turn-taking pairs.
  std::vector<double> measured_slowdown_turns;
  double seconds = 0.0;  ///< Wall time of the whole bench.

  /// bench_json_head("gate"), then {"false_verdict_rate":{"1":x,"K":y,...},
  /// "detection_rate":{"5":{"1":..,"K":..,...},...},"pairs":N} for the gate (`step_level` false) or the baseline; the gate adds the keys
  /// "1+profile" and "turns" for the modes it measured, and "run_spread".
  nlohmann::json to_json(bool step_level = false) const;
};

/// Runs the bench: forks one child per training run (LibTorch is not touched in this process).
/// Throws InputError for invalid options or a run that fails.
GateBenchResult run_gate_bench(const GateBenchOptions& options);

}  // namespace recompdiag::trainer
