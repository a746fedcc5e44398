#pragma once
/// \file
/// What the monitor inspects of a model and an optimizer that LibTorch does not hold (a Python
/// training loop, through the Python package): the optimizer's groups and state at one moment, and
/// the functions that hand them and the model's tensors over at each step end. Includes ATen: kept
/// out of monitor.h, which consumers include beside their test frameworks' CHECK macros.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace recompdiag::probes {

/// One parameter as the optimizer holds it: what the probe checks, from any optimizer (a
/// torch::optim one, or a Python one through the Python package).
struct ParamStateSnapshot {
  at::Tensor param;
  bool has_state = false;         ///< The optimizer holds state for it.
  std::vector<at::Tensor> state;  ///< Its state tensors (moments); undefined ones are skipped.
  std::optional<int64_t> step;    ///< Its step counter, for optimizers that keep one.
};

/// An optimizer at one moment: the lr of each param group and every parameter's state.
struct OptimizerSnapshot {
  std::vector<double> group_lrs;
  std::vector<ParamStateSnapshot> params;
};

/// What a Monitor inspects at each step end when the model and the optimizer are not LibTorch C++
/// objects (a Python training loop, through the Python package). Each function is called on the
/// training thread inside end_step; an empty one leaves its probe nothing to inspect.
struct TrainingStateSource {
  /// Fills the model's parameters and buffers (placement probe); both come empty.
  std::function<void(std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers)> model;
  /// The optimizer's param groups and state (optimizer probe).
  std::function<OptimizerSnapshot()> optimizer;
};

}  // namespace recompdiag::probes
