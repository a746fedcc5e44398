#pragma once
/// \file
/// `recompdiag calibrate`: how far to trust the gate on the user's own job, on this runner. The
/// job runs against itself in pairs that take turns as `ab`'s do (every verdict but "no change" or
/// "not settled" is a false one), and against itself slowed down by a planted slowdown
/// (planted_slowdown.h: RECOMPDIAG_PLANT_SLOWDOWN, honoured by every Monitor, so no code changes)
/// in as many pairs, interleaved; the rates come with their intervals, with the smallest slowdown
/// the gate finds with 80% power here, the steps a phase needs for the planted one, and how a
/// compile's time spreads between two processes of the job (what `ab --calibration FILE` then
/// judges a pair's matched compiles against).
///
///     CalibrateOptions o;
///     o.command = "python train.py {out}";
///     o.pairs = 10;
///     const CalibrationRun run = run_calibration(o, std::cout);
///     if (run.exit_code == 0) {
///       write_file_atomically("calibration.json", calibration_json(run.calibration).dump(2));
///     }

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/runner/gate.h"

namespace recompdiag::runner {

/// Settings of run_calibration(). Plain data.
struct CalibrateOptions {
  /// The user's job as a shell command that trains once and writes its run file to `{out}`.
  std::string command;
  /// Pairs of the job against itself, and as many against itself slowed down.
  int pairs = 10;
  /// The planted slowdown, percent of the median step: in (0, 200].
  double slowdown_pct = 10.0;
  /// Where the pairs' run files go (DIR/same-K/, DIR/planted-K/).
  std::string out_dir = "recompdiag-calibrate";
  /// The gate whose errors are measured (threshold, alpha; compared as `ab` compares its pairs).
  Gate gate;
  /// The pairs' turns, as `ab`'s (AbCommandsOptions).
  int64_t turn_every_steps = 1;
  std::string cpus = "auto";
  int64_t turn_timeout_ms = 300000;
  int64_t start_wait_ms = 60000;
  /// Each trial is a sequence, as `ab --until-decided --max-pairs N` runs it (until_decided.h):
  /// pairs until the verdict is settled, at most `max_pairs`, so that the rates are that gate's.
  bool until_decided = false;
  int max_pairs = 5;

  /// Throws InputError with one sentence for the first invalid value: a command without {out},
  /// fewer than 2 pairs or more than 200, a slowdown outside (0, 200], the gate's settings, a
  /// `max_pairs` outside [2, 100] with `until_decided`.
  void validate() const;
};

/// A rate measured over `n` pairs, with its 95% Wilson interval.
struct MeasuredRate {
  int64_t events = 0;
  int64_t n = 0;
  double rate = 0.0;
  double low = 0.0;
  double high = 0.0;
};

/// The rate of `events` in `n` with its Wilson score interval at `confidence`. Pure.
MeasuredRate wilson_rate(int64_t events, int64_t n, double confidence = 0.95);

/// What run_calibration() measured.
struct Calibration {
  std::string command;
  std::string host;
  std::string created;  ///< ISO 8601 UTC.
  double threshold = 0.05;
  double alpha = 0.05;
  double slowdown_pct = 10.0;
  MeasuredRate false_verdicts;      ///< Same-job pairs with a verdict other than no change.
  MeasuredRate detections;          ///< Planted pairs found a regression.
  int64_t same_not_settled = 0;     ///< Same-job pairs left not settled.
  int64_t planted_not_settled = 0;  ///< Planted pairs left not settled.
  /// Trials were sequences of pairs until decided (CalibrateOptions::until_decided), at most
  /// `max_pairs`; then the pairs they ran, summed over the same-job and the planted trials (each
  /// trial counts as one in the rates above).
  bool until_decided = false;
  int max_pairs = 1;
  int64_t same_pairs_run = 0;
  int64_t planted_pairs_run = 0;
  /// The smallest slowdown the gate finds with 80% power on this job here, as a fraction: the
  /// median over the same-job pairs of their least sensitive phase's detectable effect (the
  /// phase test's `mde` at the gate's power), never below the threshold. Until decided, of each
  /// trial's first pair alone at the full alpha: one pair's sensitivity, not the sequence's.
  double detectable = 0.0;
  /// The median steps a phase had, and the steps it would need for the planted slowdown to be
  /// found with 80% power (a detectable effect shrinks as one over the root of the steps; never
  /// fewer than CompareOptions::min_samples); 0 when the planted slowdown is at or below the
  /// threshold, which no phase length finds.
  int64_t phase_steps = 0;
  int64_t steps_needed = 0;
  /// How a compile's time spreads between two processes of the job (the SD of the log of their
  /// ratio, A against A, from the same-job pairs' matched compiles), and its degrees of freedom;
  /// nullopt with fewer than 2 pairs that had them.
  std::optional<double> compile_spread;
  double compile_spread_df = 0.0;
  /// The job's shape, to refuse another job's calibration: its mode and steps per phase.
  std::string mode;
  std::vector<int64_t> phase_steps_seen;
  double wall_s = 0.0;
};

/// What run_calibration() ended with.
struct CalibrationRun {
  /// 0; else, a side's run failed (its one line is on stderr, as in `ab`) and nothing after its
  /// pair ran: side_failed_exit_code() of its code, 2 for bad input (a command that cannot start,
  /// that writes no run file) and 4 for a run that failed.
  int exit_code = 0;
  Calibration calibration;  ///< Meaningful when exit_code is 0.
};

/// Validates the options (throws InputError before anything runs), then runs the pairs, same-job
/// and planted interleaved, writing a line per pair to `progress`. Throws IoError when a process
/// or a file cannot be made, and Interrupted after a forwarded SIGINT or SIGTERM. Not
/// thread-safe (forks).
CalibrationRun run_calibration(const CalibrateOptions& options, std::ostream& progress);

/// The calibration file's JSON: {"type": "calibration", "schema": 1, "false_verdict_rate": ...,
/// "detection_rate": ..., ...}.
nlohmann::ordered_json calibration_json(const Calibration& c);

/// Reads a calibration file. Throws InputError (one line naming the file) for a file that cannot
/// be read or is not one (another type, another schema).
Calibration read_calibration(const std::string& path);

/// Throws InputError unless `c` was measured on the job `comparison` compared: the same mode and
/// number of phases, each phase's steps within a factor of 2 of the calibrated ones.
void check_calibration_fits(const Calibration& c, const Comparison& comparison,
                            const std::string& path);

/// What `ab --calibration FILE` prints beside its verdict: "calibrated on this runner (2026-12-06,
/// 10 + 10 pairs of the job): false verdicts 0% (95% CI 0-28%); a 10% slowdown found in 90% (95%
/// CI 60-98%); 80% power from 6.2%".
std::string calibration_line(const Calibration& c);

/// What to do when the calibrated gate errs more often than its alpha on this runner (the
/// false-verdict rate's interval lies above alpha), "" otherwise: with one pair per verdict, gate
/// and calibrate with pairs until decided; until decided already, a quieter runner or a larger
/// threshold (a pair's own effect, which more steps do not shrink). `calibrate` prints it under
/// its figures, `ab --calibration` beside its verdict when the file's gate is its own.
std::string calibration_advice(const Calibration& c);

}  // namespace recompdiag::runner
