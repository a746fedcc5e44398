// The one place where optional SDKs are decided in code: CMake defines
// RECOMPDIAG_HAVE_CUPTI and RECOMPDIAG_HAVE_CUDA_ALLOCATOR (0 or 1) for this file only, and leaves
// the CUPTI and CUDA-allocator sources out of the build when they are 0.
#include <memory>
#include <string>

#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/expected_device.h"
#include "recompdiag/probes/memory_probe.h"

namespace recompdiag::probes {
namespace {

/// The null object: reports why and does nothing.
class UnavailableCuptiProbe final : public CuptiProbe {
 public:
  explicit UnavailableCuptiProbe(std::string reason) { availability_.reason = std::move(reason); }
  const Availability& availability() const override { return availability_; }
  void begin_step() override {}
  CuptiStats end_step() override { return {}; }

 private:
  Availability availability_;
};

}  // namespace

#if RECOMPDIAG_HAVE_CUPTI
std::unique_ptr<CuptiProbe> make_cupti_activity_probe(const CuptiOptions& options);
#endif

bool cupti_built() { return RECOMPDIAG_HAVE_CUPTI != 0; }

std::unique_ptr<CuptiProbe> make_cupti_probe(const CuptiOptions& options) {
#if RECOMPDIAG_HAVE_CUPTI
  try {
    return make_cupti_activity_probe(options);
  } catch (const std::exception& e) {
    return std::make_unique<UnavailableCuptiProbe>(std::string("unavailable: ") + e.what());
  }
#else
  (void)options;
  return std::make_unique<UnavailableCuptiProbe>(
      "unavailable: built without CUPTI (RECOMPDIAG_WITH_CUPTI=OFF or CUPTI "
      "not found)");
#endif
}

#if RECOMPDIAG_HAVE_CUDA_ALLOCATOR
std::unique_ptr<StepProbe> make_cuda_allocator_probe(int device);
#endif

std::unique_ptr<StepProbe> make_cuda_memory_probe(const std::string& expected_device) {
  const ExpectedDevice expected(expected_device);
#if RECOMPDIAG_HAVE_CUDA_ALLOCATOR
  if (expected.text.rfind("cuda", 0) == 0) return make_cuda_allocator_probe(expected.index);
  return make_null_probe(sections::kCudaMemory,
                         "unavailable: the model is on " + expected.text +
                             ", not on a CUDA device: no caching allocator in use");
#else
  (void)expected;
  return make_null_probe(sections::kCudaMemory,
                         "unavailable: LibTorch built without CUDA (no c10_cuda library)");
#endif
}

}  // namespace recompdiag::probes
