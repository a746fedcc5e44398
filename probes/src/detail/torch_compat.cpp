// The CPU half of the probes' LibTorch seam (see torch_compat.h). The only probe file that reads
// the configure-time checks.
#include "detail/torch_compat.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <exception>
#include <stdexcept>

#include "recompdiag/torch_features.h"

#if RECOMPDIAG_TORCH_HAS_KINETO_PROFILER
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

#if RECOMPDIAG_TORCH_HAS_EXECUTOR_IS_OPTIMIZED
#include <torch/csrc/jit/runtime/graph_executor.h>
#endif

namespace recompdiag::probes::detail {

bool can_ask_executor() { return RECOMPDIAG_TORCH_HAS_EXECUTOR_IS_OPTIMIZED != 0; }

bool executor_is_optimized(torch::jit::Function& function) {
#if RECOMPDIAG_TORCH_HAS_EXECUTOR_IS_OPTIMIZED
  try {
    torch::jit::GraphFunction* graph_fn = torch::jit::tryToGraphFunction(function);
    return graph_fn != nullptr && graph_fn->get_executor().isOptimized();
  } catch (const std::exception&) {
    return false;
  }
#else
  (void)function;
  return false;
#endif
}

bool has_torch_profiler() { return RECOMPDIAG_TORCH_HAS_KINETO_PROFILER != 0; }

#if RECOMPDIAG_TORCH_HAS_KINETO_PROFILER
void start_torch_profiler() {
  namespace impl = torch::profiler::impl;
  // torch.profiler's defaults: record_shapes, profile_memory, with_stack, with_flops and
  // with_modules all off.
  const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
  const std::set<impl::ActivityType> activities = {impl::ActivityType::CPU};
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
}

int64_t stop_torch_profiler() {
  return static_cast<int64_t>(torch::autograd::profiler::disableProfiler()->events().size());
}
#else
void start_torch_profiler() {
  throw std::logic_error("LibTorch " RECOMPDIAG_TORCH_VERSION_STRING
                         " has no Kineto profiler API (profiler_kineto.h)");
}

int64_t stop_torch_profiler() { return 0; }
#endif

}  // namespace recompdiag::probes::detail
