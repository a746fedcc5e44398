#pragma once
/// \file
/// `recompdiag ab` as one call: run the pair(s), compare them, write the reports, and return the
/// gate's exit code. The command line only parses its flags into AbRunOptions.
///
///     AbRunOptions ab;
///     ab.pair.a = {"base", "build-base/my_trainer {out}"};
///     ab.pair.b = {"new", "build/my_trainer {out}"};
///     ab.pair.out_dir = "gate";
///     ab.gate.compare.fail_on = {"compiles"};
///     return run_ab(ab, std::cout, std::cerr);  // 0 pass, 1 regression, 2 bad input, 4 no verdict

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "recompdiag/runner/ab_commands.h"
#include "recompdiag/runner/ab_sides.h"
#include "recompdiag/runner/calibrate.h"
#include "recompdiag/runner/gate.h"

namespace recompdiag::runner {

/// Settings of run_ab(). Plain data.
struct AbRunOptions {
  /// The two commands, the pairs and their turns; the reports go to pair.out_dir.
  AbCommandsOptions pair;
  /// The comparison's settings before the pair fits them (AbCommandsOptions::compare_options()),
  /// and the gate's.
  Gate gate;
  /// Print the report only (no line naming the report files).
  bool quiet = false;
  /// Repeat pairs while the verdict is not settled (inconclusive), at most `max_pairs`: after
  /// pair k the pairs so far are compared at level stats::sequential_look_alpha(alpha, k,
  /// max_pairs), Lan-DeMets alpha spending, so that the repeated looks keep the gate's error at
  /// alpha (`pair.repeats` is then not used).
  bool until_decided = false;
  int max_pairs = 5;
  /// `recompdiag calibrate`'s file for this job on this runner (read_calibration()), or empty:
  /// its figures are printed beside the verdict (calibration_line()), and its compile spread is
  /// what matched compiles are judged against (CompareOptions::compile_spread). A file of another
  /// job is bad input (check_calibration_fits()), said after the reports are written.
  std::string calibration;

  /// Throws InputError with one sentence for the first invalid value, the comparison's (as
  /// fitted to the pair) then the pair's: before anything runs.
  void validate() const;
};

/// Compares what an A/B experiment ran (the two commands', or the trainer's built-in modes),
/// writes `out_dir`/report.{md,html,json}, prints the Markdown report on `out` (and, unless
/// `quiet`, where the reports are) and the gate's warning on `err`, and returns the gate's exit
/// code: `gate.exit_code()`, or side_failed_exit_code() of the runs' code when a run failed (no
/// verdict on failed runs, nothing compared). `gate.compare` is used as given: fit it to the
/// experiment first. Throws InputError as compare_run_paths() and the report files do.
/// With `calibration`, it is checked against the comparison (check_calibration_fits(), after the
/// reports are written; InputError naming `calibration_path`) and its line printed on `out`.
int report_ab(const AbExperimentResult& runs, const Gate& gate, const std::string& out_dir,
              bool quiet, std::ostream& out, std::ostream& err,
              const std::optional<Calibration>& calibration = std::nullopt,
              const std::string& calibration_path = "");

/// Calls `run` (an A/B experiment and its report, returning the exit code) so that a pair that
/// could not be run or recorded (IoError, JobError) exits kExitSideFailed after its one line on
/// `err`, never as a verdict. What else `run` throws passes through.
int guarded_ab(const std::function<int()>& run, std::ostream& err);

/// Validates, runs the pairs (run_ab_commands(); with until_decided, one at a time until the
/// verdict is settled), then report_ab() with the comparison fitted to the pair, guarded
/// (guarded_ab()). With until_decided it says on `out` after how many pairs, at what level. Throws InputError for bad input (exit 2) and
/// Interrupted after a forwarded SIGINT or SIGTERM. Not thread-safe (forks).
int run_ab(const AbRunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace recompdiag::runner
