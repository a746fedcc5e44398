#pragma once
/// \file
/// The optimizer-state probe and the placement probe: where the optimizer state and the model's
/// tensors live, checked against each parameter and the expected device.

#include <cstdint>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"

namespace at {
class Tensor;
}  // namespace at
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
  explicit OptimizerStateProbe(torch::optim::Optimizer* optimizer = nullptr)
      : optimizer_(optimizer) {}

  const Availability& availability() const { return availability_; }
  bool available() const { return availability_.available; }

  /// Replaces the inspected optimizer (e.g. rebuilt after a recompile). Null detaches.
  void set_optimizer(torch::optim::Optimizer* optimizer) { optimizer_ = optimizer; }
  /// The lr the trainer means to be in effect; 0 (the default) disables the lr check.
  void set_requested_lr(double lr) { requested_lr_ = lr; }

  /// Inspects the optimizer now. Allocates (the state map keys); call at step end.
  OptimizerStats inspect();

 private:
  Availability availability_{true, ""};
  torch::optim::Optimizer* optimizer_ = nullptr;
  double requested_lr_ = 0.0;
  int64_t previous_step_max_ = 0;
  int64_t previous_with_state_ = 0;
};

/// True when `device` (a torch device) is the expected one: "cuda" matches any
/// CUDA device, "cuda:1" only that one.
struct ExpectedDevice {
  explicit ExpectedDevice(const std::string& device);
  std::string text;
  int type = 0;    ///< c10::DeviceType as int.
  int index = -1;  ///< -1: any index.
};

/// Counts parameters, gradients and buffers not on the expected device.
/// Stateless.
PlacementStats inspect_placement(const std::vector<at::Tensor>& params,
                                 const std::vector<at::Tensor>& buffers,
                                 const ExpectedDevice& expected);

}  // namespace recompdiag::probes
