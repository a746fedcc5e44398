// The CPU half of the probes' LibTorch seam (see torch_compat.h). The only probe file that reads
// the configure-time checks.
#include "detail/torch_compat.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <exception>

#include "recompdiag/torch_features.h"

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

}  // namespace recompdiag::probes::detail
