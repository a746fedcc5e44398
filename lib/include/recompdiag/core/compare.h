#pragma once
/// \file
/// A/B comparison of two runs: per-phase ratio of steady-state medians with a bootstrap interval,
/// a Mann-Whitney U test, and a verdict a CI can gate on.
///
/// A is the baseline; ratios are B / A, so a ratio above 1 means B is slower.

#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag {

/// Settings of compare_runs().
struct CompareOptions {
  /// Noise threshold: a phase changes only when its ratio is beyond 1 +/- threshold.
  double threshold = 0.05;
  /// Significance level of the Mann-Whitney U test.
  double alpha = 0.05;
  /// Fewer steady steps than this in a phase of either run draws a warning.
  int64_t min_samples = stats::kMannWhitneyMinSamples;
  /// A steady state whose second half's median differs from its first half's by more than this
  /// fraction draws a warning: the runs' conditions changed while they ran.
  double drift_warning = 0.10;
  /// Configuration keys that are meant to differ (e.g. "mode" in `recompdiag ab`): still listed
  /// in Comparison::config_differences, but not warned about.
  std::vector<std::string> expected_differences;
  stats::BootstrapOptions bootstrap;
  AnalysisOptions analysis;

  /// Throws InputError naming the flag for the first value out of range: threshold in [0, 1)
  /// (printed as the percentage `--threshold` takes), alpha and the bootstrap confidence in
  /// (0, 1), at least one bootstrap resample. `compare` and `ab` both call it.
  void validate() const;
};

/// What a comparison concludes.
enum class Verdict { kNoChange, kRegression, kImprovement };

/// "no_change", "regression" or "improvement".
const char* to_string(Verdict verdict);

/// One phase compared.
struct PhaseComparison {
  int phase = 1;
  int64_t n_a = 0;  ///< Steady steps of A.
  int64_t n_b = 0;
  double median_a_ms = 0.0;
  double median_b_ms = 0.0;
  double p95_a_ms = 0.0;
  double p95_b_ms = 0.0;
  stats::RatioInterval ratio;  ///< B / A of steady medians, with its interval.
  stats::MannWhitneyResult mann_whitney;
  Verdict verdict = Verdict::kNoChange;
  std::string reason;  ///< Why this verdict, in one sentence.
};

/// The cost of one phase switch in both runs.
struct SwitchComparison {
  int to_phase = 2;
  double tax_s_a = 0.0;  ///< SwitchCost::tax_s of A: slow steps plus compile time.
  double tax_s_b = 0.0;
  double extra_s_a = 0.0;  ///< The slow-steps part of A's tax.
  double extra_s_b = 0.0;
  double compile_s_a = 0.0;  ///< The compile-time part of A's tax.
  double compile_s_b = 0.0;
  int64_t recovery_steps_a = 0;
  int64_t recovery_steps_b = 0;
  double tax_s_difference = 0.0;  ///< tax_s_b - tax_s_a.
};

/// A configuration value that differs between the runs (JSON text of each side; "(absent)").
struct ConfigDifference {
  std::string key;  ///< Dotted path, e.g. "config.phase2.lr" or "mode".
  std::string a;
  std::string b;
};

/// Everything compare_runs() finds.
struct Comparison {
  RunAnalysis a;
  RunAnalysis b;
  CompareOptions options;
  std::vector<PhaseComparison> phases;
  std::vector<SwitchComparison> switches;
  std::vector<ConfigDifference> config_differences;
  Verdict verdict = Verdict::kNoChange;
  std::string summary;                ///< The verdict in one sentence.
  std::vector<std::string> warnings;  ///< Config differences, few samples, skipped lines, ...
};

/// Compares run B against baseline A.
///
/// Per phase, B/A is the ratio of steady-state medians. A phase regresses when the ratio is above
/// 1 + threshold, its bootstrap interval lies above 1 and the Mann-Whitney p is below alpha; it
/// improves symmetrically (ratio below 1 - threshold). The run regresses when any phase does;
/// else it improves when any phase does.
///
/// Throws InputError naming the file when: both are the same file, a run has no steps, or a
/// phase present in one run has no steps in the other.
Comparison compare_runs(const RunFile& a, const RunFile& b, const CompareOptions& options = {});

/// Exit code for a CI gate: 1 on regression, else 0.
int exit_code_for(Verdict verdict);

}  // namespace recompdiag
