// The `cuda_memory` step probe: the CUDA caching allocator's own accounting of the expected device.
// Built only when LibTorch has CUDA (CMake's RECOMPDIAG_HAVE_CUDA_ALLOCATOR); probe_factory.cpp
// decides between it and the null probe.
#include <c10/cuda/CUDAFunctions.h>

#include <memory>

#include "detail/torch_compat.h"
#include "recompdiag/probes/step_probe.h"

namespace recompdiag::probes {
namespace {

class CudaMemoryStepProbe final : public StepProbe {
 public:
  explicit CudaMemoryStepProbe(int device) : device_(device) {}
  const char* name() const override { return sections::kCudaMemory; }
  const Availability& availability() const override { return availability_; }
  void begin_step(const StepBegin&) override {}
  void end_step(StepRecord& record) override {
    const detail::CudaAllocatorTotals totals = detail::cuda_allocator_totals(device_);
    record.cuda_memory = CudaMemoryStats{totals.allocated_bytes, totals.reserved_bytes};
  }

 private:
  int device_;
  Availability availability_{true, ""};
};

}  // namespace

std::unique_ptr<StepProbe> make_cuda_allocator_probe(int device) {
  // "cuda" without an index: the device LibTorch allocates on by default.
  return std::make_unique<CudaMemoryStepProbe>(device >= 0 ? device : c10::cuda::current_device());
}

}  // namespace recompdiag::probes
