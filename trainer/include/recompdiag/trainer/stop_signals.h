#pragma once
/// \file
/// Clean stops on SIGINT and SIGTERM: the run finishes its current step, writes its summary with
/// status "interrupted" and flushes, and the command exits 128 + the signal (130, 143), as a
/// shell expects.
///
///     TwoPhaseTrainer trainer(config);
///     StopOnSignals stop(trainer);
///     trainer.run();
///     if (stop.signal() != 0) throw Interrupted(stop.signal(), "train");

#include <csignal>

#include "recompdiag/runner/exit_codes.h"  // Interrupted
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer {

/// While alive, the first SIGINT or SIGTERM asks `trainer` to stop after its current step; a
/// second one ends the process at once (the default action), for a user who will not wait.
/// Restores the previous handlers on destruction. One per process at a time; construct and
/// destroy it on the thread that runs the trainer. Neither copyable nor movable.
class StopOnSignals {
 public:
  explicit StopOnSignals(TwoPhaseTrainer& trainer);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  StopOnSignals(StopOnSignals&&) = delete;
  StopOnSignals& operator=(StopOnSignals&&) = delete;

  /// The first signal received, or 0.
  int signal() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace recompdiag::trainer
