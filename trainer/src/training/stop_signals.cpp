#include "recompdiag/trainer/stop_signals.h"

#include <signal.h>

#include <atomic>
#include <cerrno>

#include "recompdiag/runner/signal_handlers.h"

namespace recompdiag::trainer {

namespace {

using runner::install;
using runner::SavedErrno;

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

}  // namespace recompdiag::trainer
