#pragma once
/// \file
/// The gate's error rates, measured (`recompdiag bench gate`): how often `compare` calls healthy
/// pairs of runs a regression or an improvement, and how often it catches a known slowdown (the
/// extra-work fault at a few percentages), with one run and with several runs per side; and the
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
};

/// What run_gate_bench() measured.
struct GateBenchResult {
  int pairs = 0;         ///< Trials.
  int runs = 0;          ///< Runs per side in the run-as-unit figures.
  int single_pairs = 0;  ///< One-run pairs per rate (pairs x runs).
  std::vector<double> levels;
  GateRates gate;        ///< compare as it is now.
  GateRates step_level;  ///< Steps as independent samples (bootstrap + Mann-Whitney), as before.
  /// Per level: median over the trials of the measured B / A of phase 1's steady medians
  /// (runs as the unit): what the fault really cost.
  std::vector<double> measured_slowdown;
  /// Run-to-run spread of phase 1's steady median among healthy runs of one group (pooled
  /// standard deviation of the logs): what `compare --run-noise` should be on this machine.
  double run_spread = 0.0;
  double seconds = 0.0;  ///< Wall time of the whole bench.

  /// {"false_verdict_rate":{"1":x,"K":y},"detection_rate":{"5":{"1":..,"K":..},...},"pairs":N}
  /// for the gate (`step_level` false: the shape the issue asks for) or the baseline.
  nlohmann::json to_json(bool step_level = false) const;
};

/// Runs the bench: forks one child per training run (LibTorch is not touched in this process).
/// Throws InputError for invalid options or a run that fails.
GateBenchResult run_gate_bench(const GateBenchOptions& options);

}  // namespace recompdiag::trainer
