#pragma once
/// \file
/// The optimizer-state probe: where the optimizer state lives, checked against each parameter, and
/// whether the lr asked for is the lr in effect.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/training_state.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace recompdiag::probes {

/// Inspects a torch::optim::Optimizer after its step: for every parameter, its state tensors'
/// device, dtype and bytes against the parameter's; Adam/AdamW/Adagrad/RMSprop step counters.
/// Findings: state off the parameter's device or with another dtype, state missing (a parameter
/// with a gradient and no state while others have state, or after state existed), state reset (the
/// largest step counter fell since the last inspection, e.g. a fresh optimizer replaced a trained
/// one), and the lr requested (`set_requested_lr`) against every param group's lr.
///
/// Does not own the optimizer: it must outlive the probe or be replaced with `set_optimizer` (step
/// counters are compared across the replacement: that is how a reset is seen). Not thread-safe:
/// call from the training thread, not while the optimizer steps.
class OptimizerStateProbe {
 public:
  /// `optimizer` may be null (nothing to inspect until set_optimizer).
  explicit OptimizerStateProbe(torch::optim::Optimizer* optimizer = nullptr) {
    set_optimizer(optimizer);
  }

  const Availability& availability() const { return availability_; }
  bool available() const { return availability_.available; }

  /// Replaces the inspected optimizer (e.g. rebuilt after a recompile). Null detaches.
  void set_optimizer(torch::optim::Optimizer* optimizer);
  /// Inspects what `source` returns at each step instead of a torch::optim::Optimizer (an
  /// optimizer LibTorch does not hold: the Python package's). Empty detaches.
  void set_source(std::function<OptimizerSnapshot()> source) { source_ = std::move(source); }
  /// The lr the trainer means to be in effect; 0 (the default) disables the lr check.
  void set_requested_lr(double lr) { requested_lr_ = lr; }

  /// Inspects the optimizer now. Allocates (the state map keys); call at step end.
  OptimizerStats inspect();
  /// The findings of one snapshot, against the previous inspection (a reset, state that existed).
  OptimizerStats inspect(const OptimizerSnapshot& snapshot);

 private:
  Availability availability_{true, ""};
  std::function<OptimizerSnapshot()> source_;  // empty: nothing to inspect
  double requested_lr_ = 0.0;
  int64_t previous_step_max_ = 0;
  int64_t previous_with_state_ = 0;
};

}  // namespace recompdiag::probes
