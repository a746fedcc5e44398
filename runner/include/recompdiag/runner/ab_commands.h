#pragma once
/// \file
/// An A/B experiment of two commands, e.g. two builds of a trainer: each side a shell command that
/// trains once and writes its run file to `{out}`, both alive at once and taking turns through
/// the turn channel (RECOMPDIAG_TURNS, turn_channel.h) that every Monitor picks up, repeated N
/// times. The run files land in one directory; the caller compares them as pairs (compare.h).
/// `recompdiag ab --a-cmd ... --b-cmd ...` uses it.
///
///     AbCommandsOptions options;
///     options.a = {"base", "build-base/recompdiag train --quiet --out {out}"};
///     options.b = {"new", "build/recompdiag train --quiet --out {out}"};
///     options.out_dir = "ci-ab";
///     AbExperimentResult result = run_ab_commands(options);
///     if (result.exit_code == 0) { /* compare result.a_paths against result.b_paths */ }

#include <cstdint>
#include <functional>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/turn_channel.h"
#include "recompdiag/runner/ab_sides.h"

namespace recompdiag::runner {

/// One side of a two-command experiment.
struct AbCommandSide {
  /// Names the side's run files, as AbSide::name does: DIR/NAME.jsonl, DIR/NAME-1.jsonl, ...
  std::string name;
  /// A shell command line (run as `/bin/sh -c LINE`) that trains once and writes its run file to
  /// `{out}`, replaced by the run file's path (shell-quoted where it needs quoting: leave `{out}`
  /// unquoted). It takes turns when it trains through a Monitor (MonitorOptions::take_turns):
  /// every `turn_every_steps` steps, or with 0 at its epoch boundaries (Monitor::take_turn(), as
  /// `recompdiag train` calls it). A data-parallel job (`train --world-size N`) writes rank
  /// files instead (NAME.rank0.jsonl, ...): they are the run's, compared as one job, and its rank 0
  /// takes the job's turns.
  std::string command;
};

/// Settings of run_ab_commands(). Plain data.
struct AbCommandsOptions {
  /// Side A, the baseline, and side B.
  AbCommandSide a{"a", ""};
  AbCommandSide b{"b", ""};
  /// Where the run files go (created when missing).
  std::string out_dir = "recompdiag-ab";
  /// Pairs of runs.
  int repeats = 1;
  /// Which side takes each pair's first turn: "random" (the default: drawn per pair from `seed`,
  /// so that no side always meets the machine first; recorded in AbExperimentResult::pairs),
  /// "a", "b", or "alternate" (A in odd pairs, B in even ones, as before 0.7).
  std::string first = "random";
  /// The draw of the first turns; 0: from the clock.
  uint64_t seed = 0;
  /// How long each pair's first turn waits for both commands to have started (each waits for its
  /// first turn, its process group using no CPU for 0.3 s), so that neither side's first steps
  /// run beside the other's start-up; then it is given anyway (a side that takes no turns).
  int64_t start_wait_ms = 60000;
  /// How long a side waits for a turn before it trains on without turns (it says so on stderr and
  /// in its run file); also how long a side may leave a turn unread after the other side has
  /// ended before it is stopped (a command that holds the channel but takes no turns).
  int64_t turn_timeout_ms = kDefaultTurnTimeoutMs;
  /// RECOMPDIAG_TURNS's every=: steps per turn, taken by the Monitor's begin_step (1, the
  /// default: step by step); 0: at the trainer's epoch boundaries (Monitor::take_turn()).
  int64_t turn_every_steps = 1;
  /// The CPUs both runs of a pair (every process a command starts) are pinned to (`--cpus`): "auto", the default, is
  /// one CPU, the last this process may run on; "all" pins nothing; else a list ("0-3", "1,3").
  /// On a VM whose vCPUs slow down one at a time (the host takes them for a second or more), two
  /// runs on different vCPUs see different machines however finely they take turns: on one CPU,
  /// the pair's two halves share it. One CPU also means one intra-op thread for both sides.
  std::string cpus = "auto";
  /// The sides' Monitors write no alert lines (RECOMPDIAG_QUIET_ALERTS=1): `ab --quiet`. Their
  /// run files keep every alert, and the report names what they found.
  bool quiet = false;

  /// Throws InputError with one sentence for the first invalid value: names, a command that is
  /// empty or lacks `{out}`, repeats, the first turn's policy, the turn settings.
  void validate() const;
  /// The run file of `side` ('a' or 'b') in repeat `repeat` (1-based).
  std::string run_path(char side, int repeat) const;
  /// The command line of `side` in repeat `repeat`, `{out}` replaced by run_path().
  std::string command_line(char side, int repeat) const;
  /// `base` fitted to this experiment: pairs that took turns (CompareOptions::paired and turns),
  /// since a pair's runs share the machine's state; the run headers say at what grain
  /// (RunHeader::turn_every_steps: step by step, else epoch by epoch).
  CompareOptions compare_options(CompareOptions base) const;
};

/// Called after each pair that finished (every run exited 0) with the runs so far: false stops
/// the experiment there (`ab --until-decided`: a verdict is reached).
using AfterPair = std::function<bool(const AbExperimentResult& so_far)>;

/// Runs the experiment: validates the options (throws InputError before any file exists), creates
/// the out directory, then runs each pair's two commands at once, taking turns, forwarding SIGINT
/// and SIGTERM to both (throws Interrupted after the pair when one came). The result's exit code
/// is 0 when every run exited 0 and wrote its run file (or rank files, listed as
/// AbExperimentResult lists a job's); else the pair's code (a crash on either side first, then
/// A's, then B's), each failed side saying so in one line on stderr:
///   2: bad input: a command that cannot be started (the shell's 126 or 127), or that exited 0
///      without writing its run file, or that exited 2 itself;
///   1: a run failed: it exited 1 or another code, was killed from outside (SIGKILL), or was
///      stopped for never reading its turn after the other side had ended;
///   3: a run crashed (exit 3, or a signal such as SIGSEGV).
/// Pairs after a failed one are not started, nor after one that `after_pair` stopped at. Throws
/// IoError when a pipe or a process cannot be created. Not thread-safe (forks); LibTorch is not
/// touched here.
AbExperimentResult run_ab_commands(const AbCommandsOptions& options,
                                   const AfterPair& after_pair = {});

}  // namespace recompdiag::runner
