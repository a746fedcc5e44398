#pragma once
/// \file
/// `ab --until-decided`: pairs run one at a time while the verdict is not settled, each look at
/// its spent level (Lan-DeMets alpha spending, O'Brien-Fleming-like: Lan & DeMets, Biometrika
/// 1983), so that looking again keeps the gate's error at alpha. `ab` and `calibrate` both run
/// their sequences through it.
///
///     const SequentialPairs s = run_until_decided(pair, pair.compare_options(gate.compare), 5);
///     // s.looks pairs ran; s.comparison is the last look's, at level s.level

#include "recompdiag/core/compare.h"
#include "recompdiag/runner/ab_commands.h"
#include "recompdiag/runner/ab_sides.h"

namespace recompdiag::runner {

/// What run_until_decided() ran and decided.
struct SequentialPairs {
  AbExperimentResult runs;  ///< The pairs that ran (files NAME-k.jsonl), as run_ab_commands().
  int looks = 0;            ///< The pairs compared at the last look (0: the first pair failed).
  double level = 0.0;       ///< The last look's significance level.
  Comparison comparison;    ///< The last look's comparison (meaningful when looks > 0).
  Comparison first;         ///< The first look's: the first pair alone.
  /// The last look's verdict was settled (not inconclusive) before `max_pairs` ran out.
  bool settled() const { return looks > 0 && comparison.verdict != Verdict::kInconclusive; }
};

/// Throws InputError("--max-pairs must be in [2, 100], got N") for a sequence too short to look
/// twice or too long to run. AbRunOptions::validate(), CalibrateOptions::validate() and
/// run_until_decided() check with it.
void check_max_pairs(int max_pairs);

/// Runs `pair`'s pairs one at a time, at most `max_pairs` (pair.repeats is not used), and after
/// pair k compares all so far with `compare` at level stats::sequential_look_alpha(compare.alpha,
/// k, max_pairs), stopping at the first settled verdict. A failed pair stops it (runs.exit_code,
/// as run_ab_commands() gives it). Throws as run_ab_commands() and compare_run_paths() do, and
/// as check_max_pairs() does. Not thread-safe (forks).
SequentialPairs run_until_decided(AbCommandsOptions pair, const CompareOptions& compare,
                                  int max_pairs);

}  // namespace recompdiag::runner
