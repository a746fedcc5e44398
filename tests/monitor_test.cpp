// The Monitor against real LibTorch: a small trainer loop gets every section, its alerts and its
// events; sampling still observes the steps after an event; disabled probes are null objects.
#include "recompdiag/probes/monitor.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/ir_emitter.h>

#include <algorithm>
#include <string>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/health.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

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
        RECORD_USER_SCOPE(probes::kRecorderReadScope);  // for traces and the callback hook
        const probes::RecorderRead read;                // for either hook
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
      CHECK_FALSE(record.dispatch->counted);  // counting between samples is opt-in
      CHECK(record.dispatch->ops == 0);
    }
  }
  // Steps 0-2: the start; 5 and 10: the sampling; 7-9: after the compile.
  CHECK(observed == std::vector<int64_t>{0, 1, 2, 5, 7, 8, 9, 10});
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

TEST_CASE("monitor: the default hook is the mode key unless torch.compile may run") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  probes::MonitorOptions options;
  options.log_alerts = false;
  CHECK(options.dispatcher_hook == probes::DispatchHook::kAuto);
  CHECK(probes::parse_dispatch_hook("auto", "--dispatch-hook") == probes::DispatchHook::kAuto);
  CHECK(std::string(probes::dispatch_hook_name(probes::DispatchHook::kAuto)) == "auto");
  CHECK_THROWS_WITH_AS(probes::parse_dispatch_hook("profiler", "--dispatch-hook"),
                       "--dispatch-hook: unknown hook 'profiler' (expected auto, record-function "
                       "or mode-key)",
                       InputError);
  auto used = [&](const probes::MonitorOptions& o) {
    const probes::Monitor monitor(*model, adam, o);
    return monitor.dispatcher_hook();
  };
  CHECK(used(options) == probes::DispatchHook::kModeKey);
  options.compiled = true;  // a loop that runs torch.compile: its guards check the dispatch keys
  CHECK(used(options) == probes::DispatchHook::kRecordFunction);
  options.compiled = false;
  options.dispatcher_hook = probes::DispatchHook::kRecordFunction;
  CHECK(used(options) == probes::DispatchHook::kRecordFunction);
  options.dispatcher = false;
  CHECK_FALSE(used(options).has_value());
}

TEST_CASE("monitor options: one validator, the Monitor's and the bindings' first step") {
  torch::nn::Linear model(4, 1);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  auto refused = [&](probes::MonitorOptions o) {
    try {
      o.validate();
    } catch (const InputError& e) {
      // The Monitor refuses the same, before it installs anything.
      CHECK_THROWS_AS(probes::Monitor(*model, adam, o), InputError);
      return std::string(e.what());
    }
    return std::string();
  };
  probes::MonitorOptions o;
  o.log_alerts = false;
  CHECK(refused(o).empty());
  probes::MonitorOptions bad = o;
  bad.expected_device = "gpu:x";
  CHECK_FALSE(refused(bad).empty());
  bad = o;
  bad.dispatcher_sample_every = 0;
  CHECK(refused(bad) == "dispatcher_sample_every must be >= 1, got 0");
  bad = o;
  bad.max_queued_events = -1;
  CHECK(refused(bad) == "max_queued_events must be >= 0, got -1");
  bad = o;
  bad.dispatcher_hook = probes::DispatchHook::kModeKey;
  bad.compiled = true;
  CHECK(refused(bad).find("needs compiled=False") != std::string::npos);
  bad.dispatcher = false;  // no dispatcher probe: no key
  CHECK(refused(bad).empty());
  // The nested options' own checks, which the Monitor used to clamp silently.
  bad = o;
  bad.health.warmup_steps = -1;
  CHECK(refused(bad) == "warmup_steps must be >= 0, got -1");
  bad = o;
  bad.health.rolling_window = 5;  // min_window stays 10
  CHECK(refused(bad) == "min_window must be <= rolling_window (5), got 10");
  bad = o;
  bad.health.slow_step_factor = 0.5;
  CHECK(refused(bad) == "slow_step_factor must be a finite number >= 1, got 0.5");
  bad = o;
  bad.health.memory_growth.recompiles = 99;
  CHECK(refused(bad) == "memory_growth.recompiles must be <= 8, got 99");
  bad = o;
  bad.health.memory_growth.window = 3;
  CHECK(refused(bad) == "memory_growth.window must be >= 8, got 3");
  bad = o;
  bad.cupti_options.buffers = 0;
  CHECK(refused(bad) == "cupti_options.buffers must be >= 1, got 0");
}
