// The one place where optional SDKs are decided in code: CMake defines
// RECOMPDIAG_HAVE_CUPTI (0 or 1) for this file only, and leaves the CUPTI
// sources out of the build when it is 0.
#include <memory>
#include <string>

#include "recompdiag/probes/cupti_probe.h"

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

}  // namespace recompdiag::probes
