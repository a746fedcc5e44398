#pragma once
// The OS side of `ab --a-cmd ... --b-cmd ...`: two shell commands started at once, each in a
// process group of its own with a turn channel (RECOMPDIAG_TURNS) whose other end this process
// holds, and the turns relayed between them until both have ended. Torch-free: nothing here
// touches LibTorch before or after the fork.
//
// Relaying through the parent, rather than joining the two commands by pipes directly, lets the
// parent see what a direct pipe would hide: a side whose channel is still open but which never
// reads the turn it was given (`sleep 30` holding the descriptors, a trainer that links the
// Monitor but never takes a turn). Once the other side has ended, such a side would be waited
// for without end; the parent stops it instead.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "recompdiag/runner/forward_signals.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::runner::detail {

/// What run_command_pair() starts.
struct CommandPairOptions {
  /// Shell command lines (run as `/bin/sh -c LINE`), side A first.
  std::array<std::string, 2> commands;
  /// The sides' names in messages ("a", "base run 2").
  std::array<std::string, 2> labels;
  /// Which side has the first turn (0: A).
  int first = 0;
  /// How long the first turn waits for both sides to have started: until each side's process
  /// group has used no CPU for a while (it waits for its first turn, or is gone), at most this.
  /// 0: the first turn at once.
  int64_t start_wait_ms = 0;
  /// RECOMPDIAG_TURNS's timeout_ms and every=, for both sides. A side that leaves a turn unread
  /// for timeout_ms after the other side has ended is stopped.
  int64_t timeout_ms = 0;
  int64_t every_steps = 0;
  /// The CPUs both commands (and all they start) run on; empty: not pinned.
  std::vector<int> cpus;
  /// RECOMPDIAG_QUIET_ALERTS=1 in both commands' environment: their Monitors write no alert lines.
  bool quiet = false;

  /// Throws InputError naming the field for an empty command, a `first` other than 0 or 1, a
  /// negative wait, timeout or turn length, or a CPU below 0. run_command_pair() calls it.
  void validate() const;
};

/// How the pair started.
struct PairStart {
  /// Seconds from the start of both commands until the first turn was given.
  double wait_s = 0.0;
  /// Both sides were waiting (or gone) when the first turn was given; false when start_wait_ms
  /// ran out first (a side that never waits for a turn, or starts slower than that).
  bool together = false;
};

/// How one command of a pair ended.
struct CommandOutcome {
  int wait_status = 0;  ///< waitpid's status.
  /// Stopped by the pair (SIGTERM, then SIGKILL) for never reading its turn after the other side
  /// had ended.
  bool stopped = false;
};

/// Starts both commands with their turn channels, waits for both to have started (start_wait_ms:
/// so that neither side's first steps run beside the other's start-up), gives `first` the first
/// turn, relays every passed turn to the other side while both take turns (a side whose channel
/// closes, or which ends, lets the other run on alone: its channel reads end of file), and waits
/// for both. Each command's process group is registered with `forward` while it runs. Throws
/// InputError when `options.validate()` does, IoError when a pipe or a process cannot be created
/// (a side already started is killed and waited for first). Not thread-safe (forks).
std::array<CommandOutcome, 2> run_command_pair(const CommandPairOptions& options,
                                               ForwardSignals& forward, PairStart* start = nullptr);

}  // namespace recompdiag::runner::detail
