#pragma once
// What the stop-signal handlers share (stop_signals.cpp, forward_signals.cpp): errno kept across a
// handler, and installing one handler for SIGINT and SIGTERM.

#include <signal.h>

#include <cerrno>

namespace recompdiag::runner {

/// Handlers may touch only lock-free atomics and async-signal-safe calls, and leave errno as they
/// found it: the code they interrupt may be about to read it (`waitpid` failing with EINTR, which a
/// failed `kill` in the handler would turn into ESRCH). ThreadSanitizer reports a handler that
/// changes errno ("signal handler spoils errno"; scripts/sanitize tsan-torch).
class SavedErrno {
 public:
  SavedErrno() : saved_(errno) {}
  ~SavedErrno() { errno = saved_; }
  SavedErrno(const SavedErrno&) = delete;
  SavedErrno& operator=(const SavedErrno&) = delete;

 private:
  int saved_;
};

/// Installs `handler` for SIGINT and SIGTERM with `flags`, keeping the old actions.
inline void install(void (*handler)(int), int flags, struct sigaction* old_int,
                    struct sigaction* old_term) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = flags;
  ::sigaction(SIGINT, &sa, old_int);
  ::sigaction(SIGTERM, &sa, old_term);
}

}  // namespace recompdiag::runner
