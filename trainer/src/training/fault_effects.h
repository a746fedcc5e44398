#pragma once
// Effects of the injected faults (faults.h) that need LibTorch beyond the model: private to the
// trainer, which decides when each applies. Each is a real mistake, never a simulated number.

#include <torch/torch.h>

#include <cstddef>

namespace recompdiag::trainer::detail {

/// The `deopt` fault: while alive, graph executors that start profiling never finish, so the
/// step keeps running its profiling plan (profile nodes, no optimized plan, no differentiable
/// subgraphs). LibTorch copies the profiling count into an executor at its first run: an
/// executor created and first run while this is alive stays unoptimized for good. Restores the
/// process-wide count on destruction. One at a time; neither copyable nor movable. Throws
/// std::runtime_error where LibTorch does not expose the count (torch_compat.h).
class ProfilingNeverCompletes {
 public:
  ProfilingNeverCompletes();
  ~ProfilingNeverCompletes();
  ProfilingNeverCompletes(const ProfilingNeverCompletes&) = delete;
  ProfilingNeverCompletes& operator=(const ProfilingNeverCompletes&) = delete;
  ProfilingNeverCompletes(ProfilingNeverCompletes&&) = delete;
  ProfilingNeverCompletes& operator=(ProfilingNeverCompletes&&) = delete;

 private:
  size_t saved_runs_ = 0;
};

/// The `state-dtype` fault: casts every Adam state tensor to `dtype` in place, as a careless
/// `.to(torch::kDouble)` while moving the state does. Adam keeps working (in-place updates
/// promote), now in double precision, with state and parameters of different dtypes.
void cast_adam_state(torch::optim::Adam& adam, torch::ScalarType dtype);

/// The `lr-trap` fault: writes `lr` to a copy of the optimizer's default options, which leaves
/// the lr in effect (the param groups') unchanged.
void set_lr_on_copy(torch::optim::Adam& adam, double lr);

}  // namespace recompdiag::trainer::detail
