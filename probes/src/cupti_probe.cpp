// The CUPTI probe proper: attributes what CuptiApi collected to steps. Built
// only with CUPTI.
#include "recompdiag/probes/cupti_probe.h"

#include <memory>
#include <string>

#include "detail/cupti_api.h"

namespace recompdiag::probes {
namespace {

class CuptiActivityProbe final : public CuptiProbe {
 public:
  explicit CuptiActivityProbe(const CuptiOptions& options) {
    std::string why_not;
    api_ = detail::CuptiApi::start(options, &why_not);
    availability_.available = api_ != nullptr;
    if (!api_) availability_.reason = "unavailable: " + why_not;
  }
  const Availability& availability() const override { return availability_; }
  void begin_step() override {
    // Work queued before the step (e.g. the previous step's tail) belongs to no
    // step.
    if (api_) api_->flush_and_take();
  }
  CuptiStats end_step() override { return api_ ? api_->flush_and_take() : CuptiStats{}; }

 private:
  Availability availability_;
  std::unique_ptr<detail::CuptiApi> api_;
};

}  // namespace

std::unique_ptr<CuptiProbe> make_cupti_activity_probe(const CuptiOptions& options) {
  return std::make_unique<CuptiActivityProbe>(options);
}

}  // namespace recompdiag::probes
