// Probes and the Monitor against real LibTorch: ops counted by hand, real
// torch::jit::compile'd functions, a real Adam optimizer with planted state. No
// timing assertions.
#include <ATen/record_function.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/ir_emitter.h>
#include <torch/torch.h>

// LibTorch brings glog's CHECK macros; doctest's must win, or assertions go
// uncounted.
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/health.h"
#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/probes/jit_probe.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/probes/optimizer_probe.h"
#include "recompdiag/probes/overhead.h"
#include "recompdiag/probes/placement_probe.h"
#include "recompdiag/probes/step_probe.h"

using namespace recompdiag;
using probes::DispatcherOptions;
using probes::DispatcherProbe;

namespace {

// Five top-level ops: ones, mul, add, sum, item (item syncs). Nested ops (mul's
// scalar wrapping, item's _local_scalar_dense, sum's fill_) do not count.
float five_ops(int64_t n) {
  torch::Tensor a = torch::ones({2, n});
  torch::Tensor b = a * 2;
  torch::Tensor c = b + a;
  torch::Tensor s = c.sum();
  return s.item<float>();
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::shared_ptr<torch::jit::CompilationUnit> compile_f() {
  return torch::jit::compile("def f(x, y):\n  return (x * y + 1).relu().sum()\n");
}

}  // namespace

TEST_CASE("dispatcher probe: counts match a hand-counted op sequence") {
  DispatcherProbe probe;
  REQUIRE(probe.available());

  probe.begin_step(0);
  five_ops(3);
  DispatchStats d = probe.end_step();
  CHECK(d.sampled);
  CHECK(d.ops == 5);
  CHECK(d.ops_cpu == 5);
  CHECK(d.ops_cuda == 0);
  CHECK(d.host_ops == 0);  // expected device is the host
  CHECK(d.syncs == 1);
  CHECK(d.recorder_syncs == 0);
  CHECK(d.new_signatures == 5);
  CHECK(d.dropped == 0);
  CHECK(d.copies_h2d + d.copies_d2h + d.copies_d2d == 0);

  SUBCASE("the same ops again are no new signatures; a new shape is") {
    probe.begin_step(1);
    five_ops(3);
    d = probe.end_step();
    CHECK(d.ops == 5);
    CHECK(d.new_signatures == 0);
    probe.begin_step(2);
    five_ops(4);
    d = probe.end_step();
    CHECK(d.new_signatures == 3);  // mul, add, sum; ones (no tensor argument)
                                   // and item (0-dim) are seen
  }

  SUBCASE("an item() inside the recorder's scope is the recorder's sync") {
    probe.begin_step(1);
    torch::Tensor loss = torch::ones({3}).sum();
    float planted = loss.item<float>();  // the planted sync
    {
      RECORD_USER_SCOPE(probes::kRecorderReadScope);
      planted += loss.item<float>();
    }
    d = probe.end_step();
    CHECK(planted == 6.0f);
    CHECK(d.syncs == 1);
    CHECK(d.recorder_syncs == 1);
    CHECK(d.ops == 4);  // ones, sum, item, item
  }

  SUBCASE("ops outside a step are not counted") {
    five_ops(3);
    probe.begin_step(1);
    d = probe.end_step();
    CHECK(d.ops == 0);
  }

  SUBCASE("a copy to another device is a cross-device copy with its bytes") {
    probe.begin_step(1);
    torch::Tensor host = torch::ones({2, 3});
    torch::Tensor elsewhere = host.to(torch::kMeta);  // the meta device stands in for a GPU
    d = probe.end_step();
    CHECK(elsewhere.device().is_meta());
    CHECK(d.copies_h2d == 1);
    CHECK(d.bytes_h2d == 2 * 3 * 4);
    CHECK(d.copies_d2h == 0);
  }
}

TEST_CASE("dispatcher probe: host ops when the expected device is CUDA; sampling") {
  DispatcherOptions options;
  options.expected_device = "cuda";
  options.sample_every = 2;
  DispatcherProbe probe(options);
  REQUIRE(probe.available());
  probe.begin_step(0);
  five_ops(3);
  DispatchStats d = probe.end_step();
  CHECK(d.host_ops == 5);
  probe.begin_step(1);
  five_ops(3);
  d = probe.end_step();
  CHECK_FALSE(d.sampled);
  CHECK(d.ops == 0);
}

TEST_CASE("dispatcher probe: one per process; the observer goes with the probe") {
  {
    DispatcherProbe first;
    REQUIRE(first.available());
    DispatcherProbe second;
    CHECK_FALSE(second.available());
    CHECK(second.availability().reason.find("another dispatcher probe") != std::string::npos);
  }
  CHECK_FALSE(at::hasGlobalCallbacks());
  DispatcherProbe again;
  CHECK(again.available());
}

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

TEST_CASE("monitor: a small trainer loop gets its sections, alerts and events") {
  torch::manual_seed(0);
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  probes::MonitorOptions options;
  options.log_alerts = false;
  options.health.warmup_steps = 2;
  std::vector<Alert> seen;
  options.on_alert = [&](const Alert& a) { seen.push_back(a); };
  std::vector<StepRecord> records;
  bool cupti_available = false;
  {
    probes::Monitor monitor(*model, adam, options);
    cupti_available = monitor.cupti_availability().available;
    const nlohmann::json probes_json = monitor.probe_availability();
    CHECK(probes_json[sections::kDispatch]["available"] == true);
    CHECK(probes_json["jit"]["available"] == true);
    CHECK(probes_json["optimizer"]["available"] == true);
    CHECK(probes_json["placement"]["available"] == true);
    CHECK(probes_json.contains("cupti"));
    CHECK(probes_json.contains("nvtx"));

    auto unit = torch::jit::compile("def loss(y):\n  return (y * y).sum()\n");
    monitor.note_event(EventKind::kCompile, "initial compile");
    monitor.watch(unit);
    monitor.set_requested_lr(1e-3);
    for (int64_t step = 0; step < 6; ++step) {
      if (step == 4) {
        // The trap: the trainer thinks it lowered lr.
        auto copy = static_cast<torch::optim::AdamOptions&>(adam.defaults());
        copy.lr(1e-4);
        monitor.set_requested_lr(copy.lr());
      }
      StepRecord rec;
      {
        probes::StepGuard step_guard(monitor, rec, step);
        adam.zero_grad();
        torch::Tensor loss = unit->run_method("loss", model(torch::ones({8, 4}))).toTensor();
        loss.backward();
        adam.step();
        RECORD_USER_SCOPE(probes::kRecorderReadScope);
        rec.loss = loss.item<double>();
      }
      records.push_back(rec);
    }
    std::vector<EventRecord> events = monitor.take_events();
    REQUIRE(events.size() >= 2);
    CHECK(events[0].kind == EventKind::kCompile);
    CHECK(events[0].reason == "initial compile");
    CHECK(events.back().kind == EventKind::kAlert);
    CHECK(monitor.take_events().empty());
  }
  CHECK_FALSE(at::hasGlobalCallbacks());  // the observers left with the monitor

  REQUIRE(records.size() == 6);
  for (const StepRecord& rec : records) {
    REQUIRE(rec.dispatch.has_value());
    REQUIRE(rec.jit.has_value());
    REQUIRE(rec.optimizer.has_value());
    REQUIRE(rec.placement.has_value());
    CHECK(rec.dispatch->ops > 0);
    CHECK(rec.dispatch->syncs == 0);
    CHECK(rec.dispatch->recorder_syncs == 1);
    CHECK(rec.optimizer->params == 2);
    CHECK(rec.placement->params_off_device == 0);
    CHECK(rec.wall_ms > 0.0);
  }
  CHECK(records[0].step == 0);
  CHECK(records[5].step == 5);
  CHECK(records[0].jit->compiles == 1);
  CHECK(records[3].jit->compiles == 0);
  CHECK(records[5].optimizer->params_with_state == 2);
  CHECK(records[5].optimizer->step_max == 6);
  CHECK_FALSE(has(records[3].alerts, rules::kLrNotInEffect));
  CHECK(has(records[4].alerts, rules::kLrNotInEffect));
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.back().rule == rules::kLrNotInEffect);
  CHECK(seen.back().step == 4);
  // The CUPTI section is there exactly when the probe can run.
  CHECK(records[0].cupti.has_value() == cupti_available);
}

TEST_CASE("observer cost micro-benchmark: the 'on' rounds are observed (figures only, no timing)") {
  const probes::ObserverCost cost = probes::measure_observer_cost(20000, 3);
  MESSAGE("ns/op off " << cost.ns_per_op_off << ", on " << cost.ns_per_op_on
                       << ", on without signatures " << cost.ns_per_op_on_no_signatures);
  // Every add_ of every "on" round went through the observer (plus the few ops that make the
  // round's constant); the "off" rounds had no observer left behind.
  CHECK(cost.ops_observed_on >= 3 * 20000);
  CHECK(cost.ops_observed_on < 3 * 20000 + 3 * 100);
  CHECK(cost.ops_observed_on_no_signatures >= 3 * 20000);
  CHECK_FALSE(at::hasGlobalCallbacks());
}

// GPU only: skipped (and counted as skipped) without a CUDA LibTorch and a device.
TEST_CASE("GPU: CUPTI and dispatcher probes see kernels, copies and syncs on CUDA" *
          doctest::skip(!torch::cuda::is_available())) {
  auto cupti = probes::make_cupti_probe();
  MESSAGE("CUPTI: " << (cupti->available() ? "available" : cupti->availability().reason));
  // A build with CUPTI on a GPU machine must get it: unavailable here is a failure, not a skip.
  if (probes::cupti_built()) REQUIRE_MESSAGE(cupti->available(), cupti->availability().reason);
  DispatcherOptions options;
  options.expected_device = "cuda";
  DispatcherProbe dispatcher(options);
  REQUIRE(dispatcher.available());
  auto step = [&](int64_t n) {
    cupti->begin_step();
    dispatcher.begin_step(0);
    torch::Tensor host = torch::ones({n});        // host op: ones
    torch::Tensor dev = host.to(torch::kCUDA);    // h2d copy of n floats
    float value = (dev * 2).sum().item<float>();  // kernels, then a sync (d2h)
    CHECK(value == doctest::Approx(2.0 * static_cast<double>(n)));
    torch::cuda::synchronize();
    return std::make_pair(dispatcher.end_step(), cupti->end_step());
  };
  auto [d1, c1] = step(1024);
  CHECK(d1.copies_h2d == 1);
  CHECK(d1.bytes_h2d == 1024 * 4);
  CHECK(d1.syncs == 1);
  CHECK(d1.ops_cuda >= 3);  // mul, sum, item
  CHECK(d1.host_ops >= 1);  // ones on the host
  if (cupti->available()) {
    CHECK(c1.kernels >= 2);
    CHECK(c1.new_kernels >= 1);
    CHECK(c1.memcpy_h2d >= 1);
    CHECK(c1.bytes_h2d >= 1024 * 4);
    CHECK(c1.memcpy_d2h >= 1);
    auto [d2, c2] = step(1024);
    CHECK(d2.new_signatures == 0);
    CHECK(c2.new_kernels == 0);
    CHECK(c2.module_loads == 0);
    CHECK(c2.dropped == 0);
  }
}

TEST_CASE("monitor: sampled dispatcher still observes the start and every step after an event") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  probes::MonitorOptions options;
  options.log_alerts = false;
  options.dispatcher_sample_every = 5;
  options.dispatcher_full_steps_after_event = 3;
  probes::Monitor monitor(*model, adam, options);
  std::vector<int64_t> observed;
  for (int64_t step = 0; step < 14; ++step) {
    if (step == 7) monitor.note_event(EventKind::kCompile, "recompiled");
    StepRecord record;
    monitor.begin_step(step);
    model->forward(torch::ones({1, 4})).sum().backward();
    adam.step();
    monitor.end_step(record);
    REQUIRE(record.dispatch);
    if (record.dispatch->sampled) {
      CHECK(record.dispatch->ops > 0);
      observed.push_back(step);
    } else {
      CHECK(record.dispatch->ops == 0);
    }
  }
  // Steps 0-2: the start; 5 and 10: the sampling; 7-9: after the compile.
  CHECK(observed == std::vector<int64_t>{0, 1, 2, 5, 7, 8, 9, 10});
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

TEST_CASE("monitor: disabled probes are null objects, the others still fill their sections") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  probes::MonitorOptions options;
  options.log_alerts = false;
  options.dispatcher = false;
  options.placement = false;
  probes::Monitor monitor(*model, adam, options);
  const nlohmann::json availability = monitor.probe_availability();
  for (const char* name : {sections::kDispatch, sections::kPlacement}) {
    CAPTURE(name);
    CHECK(availability[name]["available"] == false);
    CHECK(availability[name]["reason"] == "disabled by MonitorOptions");
  }
  CHECK(availability[sections::kJit]["available"] == true);
  StepRecord record;
  monitor.begin_step(0);
  model->forward(torch::ones({1, 4})).sum().backward();
  adam.step();
  monitor.end_step(record);
  CHECK_FALSE(record.dispatch.has_value());
  CHECK_FALSE(record.placement.has_value());
  CHECK(record.jit.has_value());
  REQUIRE(record.optimizer.has_value());
  CHECK(record.optimizer->params_with_state == 2);
}
