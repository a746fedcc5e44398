#pragma once
/// \file
/// What the two kinds of A/B experiment share (the trainer's built-in ab_experiment.h, and
/// ab_commands.h here): what an experiment produced, the rules for a side's name and for the turn
/// settings, and the exit code of a pair.

#include <cstdint>
#include <string>
#include <vector>

namespace recompdiag::runner {

/// How one pair of an experiment took its turns.
struct PairTurns {
  char first = 'a';  ///< The side given the first turn: 'a' or 'b'.
  /// Seconds the first turn waited for both sides to start, and whether both had (else the wait
  /// ran out). Two commands' pairs only; the built-in modes start from one process, forked.
  double start_wait_s = 0.0;
  bool started_together = false;
};

/// What an experiment produced.
struct AbExperimentResult {
  /// Side A's run files, repeat 1 first; with a world size, every rank file of each run, by rank.
  std::vector<std::string> a_paths;
  std::vector<std::string> b_paths;
  /// 0 when every run finished; else the first failed run's code (2: bad input, 1: the run
  /// failed or was killed, 3: it crashed; a job's code is wait_for_ranks()'s: 3 when a rank
  /// crashed), which the CLI exits with. Runs after a failed one are not started.
  int exit_code = 0;
  /// Each pair's turns, in order (two commands' experiments; empty for the built-in modes).
  std::vector<PairTurns> pairs;
};

/// Throws InputError (one line) unless `name` can name a side's run files: letters, digits, '-',
/// '_' and '.', not empty, not starting with '.'.
void check_side_name(const std::string& name);

/// Throws InputError (one line) for `--turn-every` below 0 or a `--cpus` list parse_cpus()
/// refuses.
void check_turn_settings(int64_t turn_every_steps, const std::string& cpus);

/// The exit code of a pair from its sides' codes: a crash on either side first, then A's failure,
/// then B's.
int pair_code(int a, int b);

}  // namespace recompdiag::runner
