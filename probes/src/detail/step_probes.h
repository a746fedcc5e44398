#pragma once
// The Monitor's step probes: each probe class behind the StepProbe interface. The probe classes
// keep their own API (watch, set_optimizer, ...); these adapters only map begin and end of a step
// onto them and write their section of the record.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/probes/jit_probe.h"
#include "recompdiag/probes/optimizer_probe.h"
#include "recompdiag/probes/placement_probe.h"
#include "recompdiag/probes/step_probe.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace recompdiag::probes {

class DispatchStepProbe final : public StepProbe {
 public:
  explicit DispatchStepProbe(const DispatcherOptions& options) : probe_(options) {}
  const char* name() const override { return sections::kDispatch; }
  const Availability& availability() const override { return probe_.availability(); }
  DispatchHook hook() const { return probe_.hook(); }
  void begin_step(const StepBegin& begin) override {
    probe_.begin_step(begin.step, begin.observe_all);
    begun_ = true;
  }
  void end_step(StepRecord& record) override {
    const bool begun = begun_;
    begun_ = false;
    if (!probe_.available()) return;
    DispatchStats stats = probe_.end_step();
    if (begun) record.dispatch = stats;  // without a begin, nothing was observed
  }

 private:
  DispatcherProbe probe_;
  bool begun_ = false;
};

class JitStepProbe final : public StepProbe {
 public:
  const char* name() const override { return sections::kJit; }
  const Availability& availability() const override { return probe_.availability(); }
  void begin_step(const StepBegin&) override { probe_.begin_step(); }
  void end_step(StepRecord& record) override {
    if (probe_.available()) record.jit = probe_.end_step();
  }
  JitProbe& probe() { return probe_; }

 private:
  JitProbe probe_;
};

class OptimizerStepProbe final : public StepProbe {
 public:
  explicit OptimizerStepProbe(torch::optim::Optimizer* optimizer) : probe_(optimizer) {}
  const char* name() const override { return sections::kOptimizer; }
  const Availability& availability() const override { return probe_.availability(); }
  void begin_step(const StepBegin&) override {}
  void end_step(StepRecord& record) override { record.optimizer = probe_.inspect(); }
  OptimizerStateProbe& probe() { return probe_; }

 private:
  OptimizerStateProbe probe_;
};

class PlacementStepProbe final : public StepProbe {
 public:
  using Source = std::function<void(std::vector<at::Tensor>&, std::vector<at::Tensor>&)>;
  /// Inspects `source`'s tensors at each step end: a model's (model_tensors()) or a Python one's.
  PlacementStepProbe(Source source, const std::string& expected_device)
      : source_(std::move(source)), expected_(expected_device) {}
  const char* name() const override { return sections::kPlacement; }
  const Availability& availability() const override { return availability_; }
  void begin_step(const StepBegin&) override {}
  void end_step(StepRecord& record) override;
  void set_model(torch::nn::Module& model) { source_ = model_tensors(model); }
  /// The source of a LibTorch module's parameters and buffers.
  static Source model_tensors(torch::nn::Module& model);

 private:
  Availability availability_{true, ""};
  Source source_;
  std::vector<at::Tensor> params_, buffers_;  // source_'s, reused
  ExpectedDevice expected_;
};

class CuptiStepProbe final : public StepProbe {
 public:
  explicit CuptiStepProbe(std::unique_ptr<CuptiProbe> probe) : probe_(std::move(probe)) {}
  const char* name() const override { return sections::kCupti; }
  const Availability& availability() const override { return probe_->availability(); }
  void begin_step(const StepBegin&) override { probe_->begin_step(); }
  void end_step(StepRecord& record) override {
    if (probe_->available()) record.cupti = probe_->end_step();
  }

 private:
  std::unique_ptr<CuptiProbe> probe_;
};

}  // namespace recompdiag::probes
