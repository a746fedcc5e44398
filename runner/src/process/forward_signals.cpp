// The `ab` parent's side of clean stops (forward_signals.h): SIGINT and SIGTERM recorded and
// sent on to the running children. Torch-free: the front end's `ab --a-cmd/--b-cmd` uses it.

#include "recompdiag/runner/forward_signals.h"

#include <signal.h>

#include <atomic>

#include "recompdiag/runner/signal_handlers.h"

namespace recompdiag::runner {

namespace {

std::atomic<pid_t> g_children[ForwardSignals::kMaxChildren];
std::atomic<int> g_forward_signal{0};
struct sigaction g_forward_old_int {};
struct sigaction g_forward_old_term {};

void on_forward_signal(int sig) {
  const SavedErrno saved;
  int expected = 0;
  g_forward_signal.compare_exchange_strong(expected, sig);
  for (auto& child : g_children) {
    const pid_t pid = child.load();
    if (pid != 0) ::kill(pid, sig);  // negative: a process group
  }
}

}  // namespace

ForwardSignals::ForwardSignals() {
  g_forward_signal = 0;
  for (auto& child : g_children) child = 0;
  // No SA_RESTART: while this is alive the parent only starts its children and waits for them in
  // waitpid loops that retry on EINTR, so a signal may end the wait. It must where handlers run
  // late: ThreadSanitizer runs one when the interrupted call returns, and a restarted waitpid
  // held the signal until the children had ended on their own (scripts/sanitize tsan-torch).
  install(on_forward_signal, 0, &g_forward_old_int, &g_forward_old_term);
}

ForwardSignals::~ForwardSignals() {
  ::sigaction(SIGINT, &g_forward_old_int, nullptr);
  ::sigaction(SIGTERM, &g_forward_old_term, nullptr);
  for (auto& child : g_children) child = 0;
}

void ForwardSignals::add(pid_t child) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, child)) break;
  }
  if (const int sig = g_forward_signal.load()) ::kill(child, sig);
}

void ForwardSignals::remove(pid_t child) {
  for (auto& slot : g_children) {
    pid_t mine = child;
    slot.compare_exchange_strong(mine, 0);
  }
}

int ForwardSignals::signal() const { return g_forward_signal.load(); }

}  // namespace recompdiag::runner
