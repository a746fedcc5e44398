#pragma once
// Field tables for the probe sections of a step: one list of (JSON name, member) per struct, read
// by both the writer and the reader so the two can never disagree on a name.

#include <cstdint>
#include <variant>

#include "recompdiag/core/record.h"

namespace recompdiag::detail {

template <class S>
struct Field {
  const char* name;
  std::variant<int64_t S::*, double S::*, bool S::*> member;
};

inline constexpr Field<DispatchStats> kDispatchFields[] = {
    {"ops", &DispatchStats::ops},
    {"ops_cpu", &DispatchStats::ops_cpu},
    {"ops_cuda", &DispatchStats::ops_cuda},
    {"host_ops", &DispatchStats::host_ops},
    {"copies_h2d", &DispatchStats::copies_h2d},
    {"copies_d2h", &DispatchStats::copies_d2h},
    {"copies_d2d", &DispatchStats::copies_d2d},
    {"bytes_h2d", &DispatchStats::bytes_h2d},
    {"bytes_d2h", &DispatchStats::bytes_d2h},
    {"bytes_d2d", &DispatchStats::bytes_d2d},
    {"syncs", &DispatchStats::syncs},
    {"recorder_syncs", &DispatchStats::recorder_syncs},
    {"new_signatures", &DispatchStats::new_signatures},
    {"dropped", &DispatchStats::dropped},
    {"sampled", &DispatchStats::sampled},
};

inline constexpr Field<JitStats> kJitFields[] = {
    {"compiles", &JitStats::compiles},
    {"plan_builds", &JitStats::plan_builds},
    {"profiling_runs", &JitStats::profiling_runs},
};

inline constexpr Field<OptimizerStats> kOptimizerFields[] = {
    {"params", &OptimizerStats::params},
    {"params_with_state", &OptimizerStats::params_with_state},
    {"state_tensors", &OptimizerStats::state_tensors},
    {"state_bytes", &OptimizerStats::state_bytes},
    {"state_off_device", &OptimizerStats::state_off_device},
    {"state_dtype_mismatch", &OptimizerStats::state_dtype_mismatch},
    {"state_missing", &OptimizerStats::state_missing},
    {"step_min", &OptimizerStats::step_min},
    {"step_max", &OptimizerStats::step_max},
    {"state_reset", &OptimizerStats::state_reset},
    {"lr_requested", &OptimizerStats::lr_requested},
    {"lr_effective", &OptimizerStats::lr_effective},
};

inline constexpr Field<PlacementStats> kPlacementFields[] = {
    {"params_off_device", &PlacementStats::params_off_device},
    {"grads_off_device", &PlacementStats::grads_off_device},
    {"buffers_off_device", &PlacementStats::buffers_off_device},
};

inline constexpr Field<CuptiStats> kCuptiFields[] = {
    {"kernels", &CuptiStats::kernels},
    {"new_kernels", &CuptiStats::new_kernels},
    {"module_loads", &CuptiStats::module_loads},
    {"graph_instantiations", &CuptiStats::graph_instantiations},
    {"memcpy_h2d", &CuptiStats::memcpy_h2d},
    {"memcpy_d2h", &CuptiStats::memcpy_d2h},
    {"memcpy_d2d", &CuptiStats::memcpy_d2d},
    {"bytes_h2d", &CuptiStats::bytes_h2d},
    {"bytes_d2h", &CuptiStats::bytes_d2h},
    {"bytes_d2d", &CuptiStats::bytes_d2d},
    {"memsets", &CuptiStats::memsets},
    {"syncs", &CuptiStats::syncs},
    {"kernel_ms", &CuptiStats::kernel_ms},
    {"dropped", &CuptiStats::dropped},
};

}  // namespace recompdiag::detail
