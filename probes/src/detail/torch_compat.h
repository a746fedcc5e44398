#pragma once
// The probes' LibTorch compatibility seam: every LibTorch call whose name or signature differs
// between the versions recompdiag builds against (1.13 and 2.x) goes through one function here.
// cmake/RecompdiagTorchCompat.cmake checks each API at configure time; only the compat files
// (torch_compat.cpp, torch_compat_cuda.cpp) see the answers, so the probes read the same on
// every version.

#include <cstdint>

namespace torch::jit {
struct Function;
}  // namespace torch::jit

namespace recompdiag::probes::detail {

/// Whether TorchScript's graph executor can be asked about a function's plan in this LibTorch.
/// Where it cannot, executor_is_optimized() is always false.
bool can_ask_executor();

/// Whether the graph executor of `function`'s current specialization (grad mode, autocast) has
/// built its optimized plan: false while it still profiles, and for a function that has no graph
/// executor. Creates the executor when there is none yet (cheap: it builds no plan). Never
/// throws. Call from the thread that runs the function.
bool executor_is_optimized(torch::jit::Function& function);

/// Whether this LibTorch has the profiler that torch.profiler drives (a configure-time check).
bool has_torch_profiler();

/// Starts LibTorch's profiler on the calling thread as torch.profiler.profile(activities=[CPU])
/// does: prepareProfiler, then enableProfiler with the KINETO state, CPU activities and every
/// RecordFunction scope (no shapes, memory, stacks or flops). Throws c10::Error when a profiler
/// already runs on this thread, and std::logic_error where has_torch_profiler() is false.
void start_torch_profiler();

/// Stops the profiler start_torch_profiler() started on this thread and returns how many events
/// it collected; post-processing them (what torch.profiler does at its stop) is included. Throws
/// c10::Error when none runs.
int64_t stop_torch_profiler();

/// The CUDA caching allocator's aggregate counters for one device, in bytes.
struct CudaAllocatorTotals {
  int64_t allocated_bytes = 0;  ///< Held by live tensors.
  int64_t reserved_bytes = 0;   ///< Reserved from the driver, cached blocks included.
};

/// The caching allocator's current totals for `device`. Defined only where LibTorch has CUDA
/// (torch_compat_cuda.cpp, built with the cuda_memory probe). Thread-safe (the allocator locks).
CudaAllocatorTotals cuda_allocator_totals(int device);

}  // namespace recompdiag::probes::detail
