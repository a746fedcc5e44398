#pragma once
// The trainer's LibTorch compatibility seam: every LibTorch call whose name or signature differs
// between the versions recompdiag builds against (1.13 and 2.x) goes through one function here.
// cmake/RecompdiagTorchCompat.cmake checks each API at configure time; only torch_compat.cpp sees
// the answers, so the trainer reads the same on every version.

#include <cstddef>
#include <optional>

namespace recompdiag::trainer::detail {

/// The number of profiling runs TorchScript's graph executor makes before it optimizes a plan
/// (process-wide), or nullopt where this LibTorch does not expose it. Thread-safe (an atomic).
std::optional<size_t> graph_executor_profiling_runs();

/// Sets that number; returns false, changing nothing, where this LibTorch does not expose it.
bool set_graph_executor_profiling_runs(size_t runs);

/// Keeps LibTorch's own log lines (c10d's socket errors, several lines each) below fatal off
/// stderr, through glog or c10's logging, whichever this LibTorch's c10 was built with.
/// Process-wide; call from one thread before the messages it should quiet.
void quiet_torch_logging();

}  // namespace recompdiag::trainer::detail
