#include "detail/step_probes.h"

#include <torch/nn/module.h>

#include <utility>

namespace recompdiag::probes {
namespace {

class NullStepProbe final : public StepProbe {
 public:
  NullStepProbe(const char* name, std::string reason)
      : name_(name), availability_{false, std::move(reason)} {}
  const char* name() const override { return name_; }
  const Availability& availability() const override { return availability_; }
  void begin_step(const StepBegin&) override {}
  void end_step(StepRecord&) override {}

 private:
  const char* name_;
  Availability availability_;
};

}  // namespace

std::unique_ptr<StepProbe> make_null_probe(const char* name, std::string reason) {
  return std::make_unique<NullStepProbe>(name, std::move(reason));
}

PlacementStepProbe::Source PlacementStepProbe::model_tensors(torch::nn::Module& model) {
  return [&model](std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers) {
    params = model.parameters();
    buffers = model.buffers();
  };
}

void PlacementStepProbe::end_step(StepRecord& record) {
  if (!source_) return;
  params_.clear();
  buffers_.clear();
  source_(params_, buffers_);
  record.placement = inspect_placement(params_, buffers_, expected_);
}

}  // namespace recompdiag::probes
