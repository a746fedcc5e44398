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
  CuptiStats end_step() override {
    CuptiStats out;
    if (!api_) return out;
    const detail::CuptiCounts c = api_->flush_and_take();
    out.kernels = c.kernels;
    out.new_kernels = c.new_kernels;
    out.module_loads = c.module_loads;
    out.graph_instantiations = c.graph_instantiations;
    out.memcpy_h2d = c.memcpy_h2d;
    out.memcpy_d2h = c.memcpy_d2h;
    out.memcpy_d2d = c.memcpy_d2d;
    out.bytes_h2d = c.bytes_h2d;
    out.bytes_d2h = c.bytes_d2h;
    out.bytes_d2d = c.bytes_d2d;
    out.memsets = c.memsets;
    out.syncs = c.syncs;
    out.kernel_ms = static_cast<double>(c.kernel_ns) / 1e6;
    out.dropped = c.dropped;
    return out;
  }

 private:
  Availability availability_;
  std::unique_ptr<detail::CuptiApi> api_;
};

}  // namespace

std::unique_ptr<CuptiProbe> make_cupti_activity_probe(const CuptiOptions& options) {
  return std::make_unique<CuptiActivityProbe>(options);
}

}  // namespace recompdiag::probes
