// The trainer's LibTorch seam (see torch_compat.h). The only trainer file that reads the
// configure-time checks.
#include "detail/torch_compat.h"

#include <c10/util/Logging.h>

#include "recompdiag/torch_features.h"

#if RECOMPDIAG_TORCH_HAS_NUM_PROFILED_RUNS
#include <torch/csrc/jit/runtime/graph_executor.h>
#endif
#if RECOMPDIAG_TORCH_GLOG
#include <glog/logging.h>
#endif

namespace recompdiag::trainer::detail {

std::optional<size_t> graph_executor_profiling_runs() {
#if RECOMPDIAG_TORCH_HAS_NUM_PROFILED_RUNS
  return static_cast<size_t>(torch::jit::getNumProfiledRuns().load());
#else
  return std::nullopt;
#endif
}

bool set_graph_executor_profiling_runs(size_t runs) {
#if RECOMPDIAG_TORCH_HAS_NUM_PROFILED_RUNS
  torch::jit::getNumProfiledRuns() = runs;
  return true;
#else
  (void)runs;
  return false;
#endif
}

void quiet_torch_logging() {
#if RECOMPDIAG_TORCH_GLOG
  FLAGS_minloglevel = google::GLOG_FATAL;
#else
  FLAGS_caffe2_log_level = c10::GLOG_FATAL;
#endif
}

}  // namespace recompdiag::trainer::detail
