#pragma once
/// \file
/// Progress of a training run, epoch by epoch, delivered to a sink the caller chooses: the
/// trainer computes the figures and never prints. `TerminalProgress` prints the Keras-like line.
///
///     recompdiag::trainer::TwoPhaseTrainer trainer(config);
///     recompdiag::trainer::TerminalProgress progress(stdout);
///     if (progress.enabled()) trainer.set_progress(&progress);
///     trainer.run();

#include <cstdint>
#include <cstdio>

namespace recompdiag::trainer {

/// One finished epoch: the means of its steps and where the run stands.
struct EpochProgress {
  const char* mode = "";   ///< "recompile" or "mutable".
  int phase = 1;           ///< 1-based.
  int epoch = 0;           ///< 0-based within the phase.
  int epochs = 0;          ///< Epochs in the phase.
  int64_t steps_done = 0;  ///< Steps of the run completed so far.
  double loss = 0.0;       ///< Mean weighted loss over the epoch's steps.
  double cat_loss = 0.0;   ///< Mean categorical-head loss.
  double bin_loss = 0.0;   ///< Mean binary-head loss.
  double lr = 0.0;         ///< The lr in effect at the epoch's end (before any plateau change).
  double ms_per_step = 0.0;
};

/// Receives progress as the run makes it; called on the training thread, between steps, outside
/// step timing. Implementations must not throw.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// After every complete epoch (an interrupted one is not reported).
  virtual void on_epoch_end(const EpochProgress& progress) = 0;
};

/// Prints one Keras-like line per epoch to `out` (not owned, must outlive this), flushed at once:
/// "recompile: phase 1 epoch 3/30 - step 30 - loss 1.2345 - ...". Not thread-safe.
class TerminalProgress : public ProgressSink {
 public:
  /// Prints only when `out` is a terminal, so piped output and tests stay clean.
  explicit TerminalProgress(std::FILE* out);
  /// Whether lines are printed: `out` is a terminal.
  bool enabled() const { return enabled_; }
  void on_epoch_end(const EpochProgress& progress) override;

 private:
  std::FILE* out_;
  bool enabled_;
};

}  // namespace recompdiag::trainer
