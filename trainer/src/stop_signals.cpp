#include "recompdiag/trainer/stop_signals.h"

#include <signal.h>

#include <atomic>
#include <cerrno>

#include "detail/forward_signals.h"

namespace recompdiag::trainer {

namespace {

// Handlers may touch only lock-free atomics and async-signal-safe calls, and leave errno as they
// found it: the code they interrupt may be about to read it (`waitpid` failing with EINTR, which a
// failed `kill` in the handler would turn into ESRCH). ThreadSanitizer reports a handler that
// changes errno ("signal handler spoils errno"; scripts/sanitize tsan-torch).
class SavedErrno {
 public:
  SavedErrno() : saved_(errno) {}
  ~SavedErrno() { errno = saved_; }
  SavedErrno(const SavedErrno&) = delete;
  SavedErrno& operator=(const SavedErrno&) = delete;

 private:
  int saved_;
};

std::atomic<TwoPhaseTrainer*> g_trainer{nullptr};
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<TwoPhaseTrainer*>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

void on_stop_signal(int sig) {
  const SavedErrno saved;
  int expected = 0;
  if (!g_stop_signal.compare_exchange_strong(expected, sig)) {
    // Second signal: the user will not wait. Die of it, as without a handler.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  if (TwoPhaseTrainer* t = g_trainer.load()) t->request_stop();
}

void install(void (*handler)(int), int flags, struct sigaction* old_int,
             struct sigaction* old_term) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = flags;
  ::sigaction(SIGINT, &sa, old_int);
  ::sigaction(SIGTERM, &sa, old_term);
}

std::atomic<pid_t> g_children[detail::ForwardSignals::kMaxChildren];
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

StopOnSignals::StopOnSignals(TwoPhaseTrainer& trainer) {
  g_stop_signal = 0;
  g_trainer = &trainer;
  // A blocked write or read resumes; the flag is checked between steps.
  install(on_stop_signal, SA_RESTART, &old_int_, &old_term_);
}

StopOnSignals::~StopOnSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_trainer = nullptr;
}

int StopOnSignals::signal() const { return g_stop_signal.load(); }

namespace detail {

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

}  // namespace detail

}  // namespace recompdiag::trainer
