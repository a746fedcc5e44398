// The CUDA half of the probes' LibTorch seam (see torch_compat.h): built only where LibTorch has
// c10_cuda (CMake's RECOMPDIAG_HAVE_CUDA_ALLOCATOR).
#include <c10/cuda/CUDACachingAllocator.h>

#include "detail/torch_compat.h"
#include "recompdiag/torch_features.h"

namespace recompdiag::probes::detail {

CudaAllocatorTotals cuda_allocator_totals(int device) {
#if RECOMPDIAG_TORCH_HAS_CACHING_DEVICE_ALLOCATOR
  // 2.x: the statistics are the device-generic caching allocator's, indexed by DeviceIndex.
  using c10::CachingAllocator::StatType;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
#else
  using c10::cuda::CUDACachingAllocator::StatType;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
#endif
  const auto all = static_cast<size_t>(StatType::AGGREGATE);
  return CudaAllocatorTotals{stats.allocated_bytes[all].current, stats.reserved_bytes[all].current};
}

}  // namespace recompdiag::probes::detail
