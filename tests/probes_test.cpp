// The JIT, optimizer-state, placement and CUPTI probes and the null probe against real LibTorch:
// real torch::jit::compile'd functions, a real Adam optimizer with planted state. No timing
// assertions.
#include <ATen/record_function.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/ir_emitter.h>

#include <string>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/health.h"
#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/jit_probe.h"
#include "recompdiag/probes/optimizer_probe.h"
#include "recompdiag/probes/placement_probe.h"
#include "recompdiag/probes/step_probe.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

std::shared_ptr<torch::jit::CompilationUnit> compile_f() {
  return torch::jit::compile("def f(x, y):\n  return (x * y + 1).relu().sum()\n");
}

}  // namespace

TEST_CASE(
    "JIT probe: one compile and one plan build per compiled function, "
    "again on recompile") {
  probes::JitProbe probe;
  REQUIRE(probe.available());
  CHECK(probe.availability().reason.empty());
  const torch::Tensor x = torch::ones({2, 3});

  auto run_steps = [&](const std::shared_ptr<torch::jit::CompilationUnit>& unit, int steps) {
    JitStats total;
    for (int i = 0; i < steps; ++i) {
      probe.begin_step();
      unit->run_method("f", x, x);
      JitStats s = probe.end_step();
      total.compiles += s.compiles;
      total.plan_builds += s.plan_builds;
      total.profiling_runs += s.profiling_runs;
    }
    return total;
  };

  auto unit = compile_f();
  probe.watch(unit);
  probe.watch(unit);  // watching again is not another compile
  JitStats first = run_steps(unit, 4);
  CHECK(first.compiles == 1);
  CHECK(first.plan_builds == 1);
  CHECK(first.profiling_runs == static_cast<int64_t>(torch::jit::getNumProfiledRuns()));

  JitStats steady = run_steps(unit, 3);
  CHECK(steady.compiles == 0);
  CHECK(steady.plan_builds == 0);
  CHECK(steady.profiling_runs == 0);

  auto recompiled = compile_f();
  probe.watch(recompiled);
  JitStats second = run_steps(recompiled, 4);
  CHECK(second.compiles == 1);
  CHECK(second.plan_builds == 1);
  CHECK(probe.watched() == 2);
  unit.reset();
  CHECK(probe.watched() == 1);
}

TEST_CASE("JIT probe: its callback is registered only while a watched function has no plan") {
  probes::JitProbe probe;
  REQUIRE(probe.available());
  const torch::Tensor x = torch::ones({2, 3});
  auto unit = compile_f();
  probe.watch(unit);
  int64_t profiling_runs = 0;
  std::vector<bool> registered;  // in each step
  for (int i = 0; i < 5; ++i) {
    probe.begin_step();
    registered.push_back(at::hasGlobalCallbacks());
    unit->run_method("f", x, x);
    profiling_runs += probe.end_step().profiling_runs;
    CHECK_FALSE(at::hasGlobalCallbacks());  // never between steps
  }
  CHECK(profiling_runs == static_cast<int64_t>(torch::jit::getNumProfiledRuns()));
  CHECK(registered.front());  // the profiling runs' steps
  CHECK_FALSE(registered.back());  // optimized: a steady step holds none

  SUBCASE("a unit watched in the middle of a step registers it for that step") {
    probe.begin_step();
    CHECK_FALSE(at::hasGlobalCallbacks());
    auto recompiled = compile_f();
    probe.watch(recompiled);
    CHECK(at::hasGlobalCallbacks());
    recompiled->run_method("f", x, x);
    const JitStats s = probe.end_step();
    CHECK(s.compiles == 1);
    CHECK(s.profiling_runs == 1);
    CHECK_FALSE(at::hasGlobalCallbacks());
  }
}

TEST_CASE(
    "optimizer probe: state found, lr trap, planted dtype and device, "
    "missing, reset") {
  torch::manual_seed(0);
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  auto train = [&](torch::optim::Optimizer& opt) {
    opt.zero_grad();
    model(torch::ones({8, 4})).pow(2).sum().backward();
    opt.step();
  };
  probes::OptimizerStateProbe probe(&adam);
  OptimizerStats s = probe.inspect();
  CHECK(s.params == 2);
  CHECK(s.params_with_state == 0);
  CHECK(s.state_missing == 0);  // Adam makes state on its first step

  train(adam);
  train(adam);
  probe.set_requested_lr(1e-3);
  s = probe.inspect();
  CHECK(s.params_with_state == 2);
  CHECK(s.state_tensors == 4);  // exp_avg, exp_avg_sq per parameter (no amsgrad)
  CHECK(s.state_bytes == 2 * (2 * 4 + 2) * 4);
  CHECK(s.step_min == 2);
  CHECK(s.step_max == 2);
  CHECK(s.state_off_device == 0);
  CHECK(s.state_dtype_mismatch == 0);
  CHECK_FALSE(s.state_reset);
  CHECK(s.lr_effective == doctest::Approx(1e-3));

  SUBCASE("the lr trap: setting lr on a copy of the options does nothing") {
    auto options = static_cast<torch::optim::AdamOptions&>(adam.defaults());  // a copy
    options.lr(1e-2);
    probe.set_requested_lr(options.lr());
    s = probe.inspect();
    CHECK(s.lr_requested == doctest::Approx(1e-2));
    CHECK(s.lr_effective == doctest::Approx(1e-3));
    HealthMonitor health;
    StepRecord rec;
    rec.optimizer = s;
    CHECK(health.evaluate(rec).at(0).rule == rules::kLrNotInEffect);
    // Set where it takes effect: no finding.
    for (auto& group : adam.param_groups()) group.options().set_lr(1e-2);
    s = probe.inspect();
    CHECK(s.lr_effective == doctest::Approx(1e-2));
  }

  SUBCASE("state planted with another dtype and on another device") {
    auto& state = static_cast<torch::optim::AdamParamState&>(*adam.state().begin()->second);
    state.exp_avg(state.exp_avg().to(torch::kFloat64));
    state.exp_avg_sq(state.exp_avg_sq().to(torch::kMeta));
    s = probe.inspect();
    CHECK(s.state_dtype_mismatch == 1);
    CHECK(s.state_off_device == 1);
  }

  SUBCASE("a parameter with a gradient and no state is missing state") {
    adam.state().erase(adam.state().begin());
    s = probe.inspect();
    CHECK(s.params_with_state == 1);
    CHECK(s.state_missing == 1);
  }

  SUBCASE("a fresh optimizer after steps is a state reset; a migrated one is not") {
    torch::optim::Adam migrated(model->parameters(), torch::optim::AdamOptions(1e-3));
    for (auto& entry : adam.state()) migrated.state()[entry.first] = entry.second->clone();
    probe.set_optimizer(&migrated);
    train(migrated);
    s = probe.inspect();
    CHECK_FALSE(s.state_reset);
    CHECK(s.step_max == 3);

    torch::optim::Adam fresh(model->parameters(), torch::optim::AdamOptions(1e-3));
    probe.set_optimizer(&fresh);
    train(fresh);
    s = probe.inspect();
    CHECK(s.state_reset);
    CHECK(s.step_max == 1);
    s = probe.inspect();
    CHECK_FALSE(s.state_reset);  // reported once, at the step it happened
  }
}

TEST_CASE("placement probe: tensors off the expected device") {
  torch::nn::BatchNorm1d model(3);
  const auto params = model->parameters();
  const auto buffers = model->buffers();
  PlacementStats on_host =
      probes::inspect_placement(params, buffers, probes::ExpectedDevice("cpu"));
  CHECK(on_host.params_off_device == 0);
  CHECK(on_host.buffers_off_device == 0);
  PlacementStats on_gpu =
      probes::inspect_placement(params, buffers, probes::ExpectedDevice("cuda"));
  CHECK(on_gpu.params_off_device == 2);
  CHECK(on_gpu.buffers_off_device == 3);
  CHECK(on_gpu.grads_off_device == 0);  // no gradients yet
  CHECK_THROWS_AS(probes::ExpectedDevice("gpu0"), InputError);
}

TEST_CASE("CUPTI probe: available with no reason, or unavailable with one and doing nothing") {
  auto probe = probes::make_cupti_probe();
  REQUIRE(probe != nullptr);
  MESSAGE("CUPTI probe: available=" << probe->available()
                                    << " reason=" << probe->availability().reason);
  const std::string reason = probe->availability().reason;
  probe->begin_step();
  const CuptiStats s = probe->end_step();  // nothing ran on a device in between
  CHECK(s.kernels == 0);
  CHECK(s.dropped == 0);
  if (probe->available()) {
    // Only a build with CUPTI, on a machine with a driver and a device, gets here.
    CHECK(probes::cupti_built());
    CHECK(reason.empty());
  } else {
    CHECK(reason.rfind("unavailable: ", 0) == 0);
    CHECK(reason.size() > std::string("unavailable: ").size());
  }
}

TEST_CASE("a null step probe reports its reason and writes nothing") {
  auto probe = probes::make_null_probe(sections::kJit, "disabled for the test");
  CHECK(std::string(probe->name()) == sections::kJit);
  CHECK_FALSE(probe->available());
  CHECK(probe->availability().reason == "disabled for the test");
  StepRecord record;
  probe->begin_step(probes::StepBegin{3, true});
  probe->end_step(record);
  CHECK_FALSE(record.jit.has_value());
  CHECK_FALSE(record.dispatch.has_value());
}
