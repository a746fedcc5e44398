#include "training/fault_effects.h"

#include <limits>
#include <stdexcept>

#include "detail/torch_compat.h"

namespace recompdiag::trainer::detail {

ProfilingNeverCompletes::ProfilingNeverCompletes() {
  const std::optional<size_t> runs = graph_executor_profiling_runs();
  if (!runs) {
    throw std::runtime_error(
        "the deopt fault needs TorchScript's profiling-run count, which this LibTorch does not "
        "expose");
  }
  saved_runs_ = *runs;
  // Far more runs than any training: the profile is never complete.
  set_graph_executor_profiling_runs(std::numeric_limits<int32_t>::max());
}

ProfilingNeverCompletes::~ProfilingNeverCompletes() {
  set_graph_executor_profiling_runs(saved_runs_);
}

void cast_adam_state(torch::optim::Adam& adam, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (auto& entry : adam.state()) {
    auto& state = static_cast<torch::optim::AdamParamState&>(*entry.second);
    state.exp_avg(state.exp_avg().to(dtype));
    state.exp_avg_sq(state.exp_avg_sq().to(dtype));
    if (state.max_exp_avg_sq().defined()) state.max_exp_avg_sq(state.max_exp_avg_sq().to(dtype));
  }
}

void set_lr_on_copy(torch::optim::Adam& adam, double lr) {
  // The mistake: a copy of the options, not a reference to the param group's.
  auto options = static_cast<torch::optim::AdamOptions&>(adam.defaults());
  options.lr(lr);
}

}  // namespace recompdiag::trainer::detail
