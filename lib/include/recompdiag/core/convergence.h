#pragma once
/// \file
/// What a run learned, next to how fast it ran: the loss just before and after each phase switch,
/// the steps it took to get back to the pre-switch loss, the loss curve of the phase after it (mean
/// per epoch), and the final loss per head; and a verdict over seeded pairs of runs (A = baseline,
/// B = candidate): no change or a regression.
///
/// The verdict tests each quality measure (the mean loss over the last phase, the loss just after
/// the switch, the final loss and each head's final loss) across the pairs: a one-sided paired
/// t-test on the per-pair log ratio B/A (B worse), Holm-adjusted over the measures. A measure
/// regresses when its adjusted p is below `alpha` and B is worse by more than `loss_tolerance`.
/// With one pair there is no test across seeds: then the pair decides by the final loss and the
/// recovery alone, and the comparison says it is untested.
///
/// The loss is compared as the new phase defines it: the steps before a switch are re-weighted
/// with the new phase's loss weights (from their unweighted head losses), so a change of loss
/// weights is not mistaken for a jump. Pure functions of run files; no LibTorch.
///
///     ConvergenceComparison c = compare_convergence({read_run_file("a.jsonl")},
///                                                   {read_run_file("b.jsonl")});
///     if (c.verdict == ConvergenceVerdict::kRegression) std::puts("B learned worse");

#include <cstdint>
#include <string>
#include <vector>

#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

/// Settings of the convergence analysis.
struct ConvergenceOptions {
  /// Steps averaged for the loss before and after a switch, for the final loss, and the width of
  /// the rolling mean that must get back to the pre-switch loss.
  int64_t window = 10;
  /// B is worse than A when its final loss is above A's by more than this fraction, or when it
  /// needs more than `recovery_slack` x A's steps (plus one window) to recover from a switch.
  double loss_tolerance = 0.05;
  double recovery_slack = 1.5;
  /// Family-wise significance level of the measures' tests (two or more pairs).
  double alpha = 0.05;

  /// Throws InputError naming the field for the first value out of range: a window below 1, a
  /// negative loss tolerance, a recovery slack below 1, an alpha outside (0, 1). Every function
  /// below calls it.
  void validate() const;
};

/// One phase switch of one run.
struct SwitchConvergence {
  int to_phase = 2;
  int64_t switch_step = 0;
  double loss_before = 0.0;  ///< Mean of the last `window` steps, under the new loss weights.
  double loss_after = 0.0;   ///< Mean of the first `window` steps after the switch.
  /// Steps after the switch until the rolling mean is back at loss_before; -1: never within the
  /// phase.
  int64_t recovery_steps = -1;
  int64_t phase_steps = 0;  ///< Steps of the new phase.
  double phase_loss = 0.0;  ///< Mean loss over the whole new phase: the area under its curve.
  /// Mean loss per epoch of the new phase (its loss curve), in order.
  std::vector<double> epoch_losses;
};

/// What one run learned.
struct RunConvergence {
  std::vector<SwitchConvergence> switches;
  double final_loss = 0.0;                ///< Mean weighted loss of the last `window` steps.
  std::vector<double> final_head_losses;  ///< Mean unweighted loss per head, same steps.
};

/// Analyzes one run; a run without steps gives zeros.
RunConvergence analyze_convergence(const ColumnarRun& run, const ConvergenceOptions& options = {});
/// The same of a RunFile.
RunConvergence analyze_convergence(const RunFile& run, const ConvergenceOptions& options = {});

/// Training quality of B against A. Quality never gates: `compare` and `ab` exit on time and
/// counts alone.
enum class ConvergenceVerdict {
  kNoChange,
  kRegression,  ///< B worse, tested across two or more seeded pairs.
  /// B worse in its one pair, by final loss or recovery: a difference no test across seeds backs,
  /// which one more seed can turn around. Never called a regression.
  kUntestedDifference,
};

/// "no change", "regression" or "untested difference".
const char* to_string(ConvergenceVerdict verdict);

/// One quality measure of B against A over the pairs.
struct QualityMeasure {
  std::string name;  ///< "last_phase_loss", "loss_after_switch", "final_loss", "final_loss_head_N".
  std::string label;     ///< For people: "mean loss over phase 2", "final loss of head 2", ...
  double a = 0.0;        ///< Mean over A's runs.
  double b = 0.0;        ///< Mean over B's runs.
  double change = 0.0;   ///< Geometric mean over pairs of B/A, minus 1 (+0.38: B 38% higher).
  int worse_pairs = 0;   ///< Pairs in which B is above A by more than the tolerance.
  int better_pairs = 0;  ///< Pairs in which B is below A by more than the tolerance.
  /// One-sided p of "B worse", Holm-adjusted over the measures; 1 with fewer than two pairs.
  double p = 1.0;
  /// B regressed on this measure: Holm-adjusted p below alpha and worse beyond the tolerance; with
  /// one pair (untested), set on the final loss when it decided the verdict.
  bool regression = false;
};

/// B's training quality against A's over paired runs (pair i: same seed and config but for what
/// is compared).
struct ConvergenceComparison {
  ConvergenceVerdict verdict = ConvergenceVerdict::kNoChange;
  int pairs = 0;
  int worse_pairs = 0;        ///< Pairs in which B is worse (final loss or recovery).
  double final_loss_a = 0.0;  ///< Mean over A's runs.
  double final_loss_b = 0.0;
  double final_loss_change = 0.0;  ///< (b - a) / a.
  /// Mean steps to recover from the first switch (a run that never recovers counts its phase's
  /// length); 0 without a switch.
  double recovery_steps_a = 0.0;
  double recovery_steps_b = 0.0;
  /// Whether the verdict rests on a test across pairs (two or more); with one pair it does not.
  bool tested = false;
  /// The measures, in a fixed order: last-phase loss, loss after the switch (when there is one),
  /// final loss, final loss per head.
  std::vector<QualityMeasure> measures;
  std::vector<RunConvergence> a;
  std::vector<RunConvergence> b;
};

/// Compares pairs a[i], b[i] (the shorter list sets the count). With two or more pairs a measure's
/// test decides (see the file comment); with one pair, B worse in its final loss or recovery.
ConvergenceComparison compare_convergence(const std::vector<RunFile>& a,
                                          const std::vector<RunFile>& b,
                                          const ConvergenceOptions& options = {});
/// The same over runs held elsewhere (not owned; must be valid for the call).
ConvergenceComparison compare_convergence(const std::vector<const RunFile*>& a,
                                          const std::vector<const RunFile*>& b,
                                          const ConvergenceOptions& options = {});
/// The same over runs held as columns (not owned; must be valid for the call).
ConvergenceComparison compare_convergence(const std::vector<const ColumnarRun*>& a,
                                          const std::vector<const ColumnarRun*>& b,
                                          const ConvergenceOptions& options = {});

}  // namespace recompdiag
