#pragma once
// The `ab` parent's side of clean stops: SIGINT and SIGTERM are forwarded to the running child
// runs (each in its own process group, so a terminal's Ctrl-C reaches them only this way, once),
// which stop after their current step and write their summaries.

#include <sys/types.h>

namespace recompdiag::runner {

/// While alive, SIGINT and SIGTERM are recorded and sent on to the registered children. One per
/// process at a time. Neither copyable nor movable.
class ForwardSignals {
 public:
  ForwardSignals();
  ~ForwardSignals();
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

  /// Registers a started child (at most kMaxChildren at once); a signal already received is sent
  /// to it at once. A negative id names a child's process group (-pid), for a command run through
  /// a shell: the signal reaches the shell and what it started.
  void add(pid_t child);
  /// Unregisters a child (or group, as registered) that was waited for.
  void remove(pid_t child);
  /// The first signal received, or 0.
  int signal() const;

  static constexpr int kMaxChildren = 64;  // a local data-parallel job's ranks
};

}  // namespace recompdiag::runner
