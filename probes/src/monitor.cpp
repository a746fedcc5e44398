#include "recompdiag/probes/monitor.h"

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <iostream>
#include <string_view>
#include <utility>

#include "detail/alert_log.h"
#include "detail/step_probes.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/planted_slowdown.h"
#include "recompdiag/probes/comm_probe.h"
#include "recompdiag/probes/compiled_probe.h"
#include "recompdiag/probes/expected_device.h"
#include "recompdiag/probes/memory_probe.h"
#include "recompdiag/probes/nvtx.h"

namespace recompdiag::probes {
namespace {

nlohmann::json availability_json(const Availability& a) {
  return {{"available", a.available}, {"reason", a.reason}};
}

constexpr char kDisabled[] = "disabled by MonitorOptions";

}  // namespace

Monitor::Monitor(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                 MonitorOptions options)
    : Monitor(&model, &optimizer, TrainingStateSource{}, std::move(options)) {}

void CuptiOptions::validate() const {
  require_at_least("cupti_options.buffers", buffers, 1);
  require_at_least("cupti_options.buffer_bytes", buffer_bytes, 1);
  require_at_least("cupti_options.kernel_name_capacity", kernel_name_capacity, 1);
}

void MonitorOptions::validate() const {
  ExpectedDevice check(expected_device);  // throws InputError when malformed
  health.validate();
  cupti_options.validate();
  require_at_least("dispatcher_sample_every", dispatcher_sample_every, 1);
  require_at_least("dispatcher_full_steps_after_event", dispatcher_full_steps_after_event, 0);
  require_at_least("max_queued_events", max_queued_events, 0);
  if (dispatcher && dispatcher_hook == DispatchHook::kModeKey && compiled) {
    throw InputError(
        "dispatcher_hook='mode-key' needs compiled=False and a loop without torch.compile: "
        "torch.compile's guards check the dispatch keys the mode key changes");
  }
}

Monitor::Monitor(TrainingStateSource source, MonitorOptions options)
    : Monitor(nullptr, nullptr, std::move(source), std::move(options)) {}

Monitor::Monitor(torch::nn::Module* model, torch::optim::Optimizer* optimizer,
                 TrainingStateSource source, MonitorOptions options)
    : options_((options.validate(), std::move(options))),
      health_(options_.health, options_.expected_device) {
  // End order: the dispatcher first, so that nothing the monitor does after it counts as the
  // step's ops; begin_step runs the list backwards, so the dispatcher also starts last.
  if (options_.dispatcher) {
    DispatcherOptions d;
    d.expected_device = options_.expected_device;
    d.sample_every = options_.dispatcher_sample_every;
    d.signatures = options_.op_signatures;
    d.count_unsampled = options_.dispatcher_count_unsampled;
    // kAuto stays kAuto without torch.compile, so the probe may fall back to the callback.
    d.hook = options_.compiled ? resolve_dispatch_hook(options_.dispatcher_hook, true)
                               : options_.dispatcher_hook;
    auto probe = std::make_unique<DispatchStepProbe>(d);
    dispatch_ = probe.get();
    probes_.push_back(std::move(probe));
  } else {
    probes_.push_back(make_null_probe(sections::kDispatch, kDisabled));
  }
  if (options_.compiled) {
    auto probe = std::make_unique<CompiledProbe>(options_.dispatcher_sample_every);
    if (probe->available()) compiled_ = probe.get();
    probes_.push_back(std::move(probe));
  } else {
    probes_.push_back(make_null_probe(sections::kCompiled, kDisabled));
  }
  if (options_.jit) {
    auto jit = std::make_unique<JitStepProbe>();
    jit_ = &jit->probe();
    probes_.push_back(std::move(jit));
  } else {
    probes_.push_back(make_null_probe(sections::kJit, kDisabled));
  }
  if (options_.cupti) {
    auto cupti = make_cupti_probe(options_.cupti_options);
    probes_.push_back(std::make_unique<CuptiStepProbe>(std::move(cupti)));
  } else {
    probes_.push_back(make_null_probe(sections::kCupti, kDisabled));
  }
  if (options_.optimizer) {
    auto probe = std::make_unique<OptimizerStepProbe>(optimizer);
    optimizer_ = &probe->probe();
    if (source.optimizer) optimizer_->set_source(std::move(source.optimizer));
    probes_.push_back(std::move(probe));
  } else {
    probes_.push_back(make_null_probe(sections::kOptimizer, kDisabled));
  }
  if (options_.placement) {
    auto probe = std::make_unique<PlacementStepProbe>(
        model != nullptr ? PlacementStepProbe::model_tensors(*model) : std::move(source.model),
        options_.expected_device);
    placement_ = probe.get();
    probes_.push_back(std::move(probe));
  } else {
    probes_.push_back(make_null_probe(sections::kPlacement, kDisabled));
  }
  if (options_.comm) {
    auto probe = std::make_unique<probes::CommProbe>();
    comm_ = probe.get();
    probes_.push_back(std::move(probe));
  } else {
    probes_.push_back(
        probes::make_null_probe(sections::kComm, "disabled: not a rank of a data-parallel job"));
  }
  if (options_.memory) {
    probes_.push_back(probes::make_memory_probe());
    probes_.push_back(probes::make_cuda_memory_probe(options_.expected_device));
  } else {
    probes_.push_back(probes::make_null_probe(sections::kMemory, kDisabled));
    probes_.push_back(probes::make_null_probe(sections::kCudaMemory, kDisabled));
  }
  events_.reserve(static_cast<size_t>(std::min<int64_t>(options_.max_queued_events, 256)));
  if (options_.take_turns) turns_ = TurnChannel::from_environment();
  if (const std::optional<double> pct = planted_slowdown_from_environment()) {
    planted_ = std::make_unique<PlantedSlowdown>(*pct);
  }
  // `ab --quiet` asks its sides for no alert lines: the run files and the report say it all.
  if (options_.log_alerts && !quiet_alerts_from_environment()) {
    alert_log_ = std::make_unique<detail::AlertLog>(std::cerr);
  }
  if (options_.nvtx) nvtx_push("recompdiag:run");
}

void Monitor::planted_work() {
  if (!planted_ || !in_step_ || planted_done_) return;
  planted_done_ = true;
  planted_->after_step(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - step_start_)
          .count());
}

double Monitor::planted_slowdown_pct() const { return planted_ ? planted_->percent() : 0.0; }

void Monitor::finish() {
  if (alert_log_) alert_log_->finish();
}

Monitor::~Monitor() {
  finish();
  if (!options_.nvtx) return;
  if (in_step_) nvtx_pop();
  if (phase_range_open_) nvtx_pop();
  nvtx_pop();
}

void Monitor::set_model(torch::nn::Module& model) {
  if (placement_) placement_->set_model(model);
}

void Monitor::set_optimizer(torch::optim::Optimizer& optimizer) {
  if (optimizer_) optimizer_->set_optimizer(&optimizer);
}

void Monitor::set_requested_lr(double lr) {
  if (optimizer_) optimizer_->set_requested_lr(lr);
}

void Monitor::watch(const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  if (jit_) jit_->watch(unit);
}

void Monitor::emit(EventRecord event) {
  if (options_.event_sink != nullptr) {
    options_.event_sink->on_event(event);
    return;
  }
  if (static_cast<int64_t>(events_.size()) >= options_.max_queued_events) {
    ++events_dropped_;
    return;
  }
  events_.push_back(std::move(event));
}

void Monitor::note_event(EventKind kind, std::string reason, nlohmann::json detail) {
  if (kind == EventKind::kCompile || kind == EventKind::kPhaseStart ||
      kind == EventKind::kOptimizerRebuild) {
    observe_all_until_ = step_ + options_.dispatcher_full_steps_after_event;
  }
  if (kind == EventKind::kPhaseStart) {
    const auto it = detail.find("phase");
    phase_ = it != detail.end() && it->is_number_integer() ? it->get<int>() : phase_ + 1;
    if (options_.nvtx) {
      // Phase ranges enclose steps: close the step's range around the swap if
      // one is open.
      if (in_step_) nvtx_pop();
      if (phase_range_open_) nvtx_pop();
      const std::string name = "recompdiag:phase " + std::to_string(phase_);
      nvtx_push(name.c_str());
      phase_range_open_ = true;
      if (in_step_) nvtx_push("recompdiag:step");
    }
  }
  EventRecord event;
  event.kind = kind;
  event.step = step_;
  event.phase = phase_;
  event.reason = std::move(reason);
  event.detail = detail.is_object() ? std::move(detail) : nlohmann::json::object();
  health_.note_event(event);
  emit(std::move(event));
}

void Monitor::observe_from_now() {
  // The same stretch as a compile event's, without shortening one already running.
  observe_all_until_ =
      std::max(observe_all_until_, step_ + options_.dispatcher_full_steps_after_event);
  if (compiled_ != nullptr && in_step_) compiled_->observe_now();
}

void Monitor::take_turn() {
  if (turn_every_steps() > 0) return;  // begin_step takes the turns
  explicit_turns_ = true;
  wait_for_turn();
}

void Monitor::wait_for_turn() {
  if (!turns_) return;
  const auto start = std::chrono::steady_clock::now();
  const TurnWait waited = turns_->wait_turn();
  turn_wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (waited != TurnWait::kTimedOut) return;
  // The run file says that this run stopped taking turns, and from which step.
  const EventRecord event = turns_->timeout_event(step_, phase_);
  note_event(event.kind, event.reason, event.detail);
}

void Monitor::begin_step(int64_t step) {
  if (step >= 0) step_ = step;
  if (const int64_t every = turn_every_steps(); every > 0 && steps_begun_ % every == 0) {
    wait_for_turn();  // before the probes start and before the step's clock
  }
  ++steps_begun_;
  if (!seen_step_) {  // the monitor's first step starts a fully observed stretch too
    seen_step_ = true;
    observe_all_until_ =
        std::max(observe_all_until_, step_ + options_.dispatcher_full_steps_after_event);
  }
  in_step_ = true;
  planted_done_ = false;
  if (options_.nvtx) nvtx_push("recompdiag:step");
  const StepBegin begin{step_, step_ < observe_all_until_};
  for (auto it = probes_.rbegin(); it != probes_.rend(); ++it) (*it)->begin_step(begin);
  step_start_ = std::chrono::steady_clock::now();
}

void Monitor::end_step(StepRecord& record) {
  planted_work();  // inside the step's time, before its clock is read
  const auto now = std::chrono::steady_clock::now();
  for (const auto& probe : probes_) probe->end_step(record);
  if (record.wall_ms == 0.0 && in_step_) {
    record.wall_ms = std::chrono::duration<double, std::milli>(now - step_start_).count();
  }
  record.step = step_;
  if (options_.nvtx && in_step_) nvtx_pop();
  in_step_ = false;

  last_alerts_ = health_.evaluate(record);
  for (const Alert& alert : last_alerts_) {
    record.alerts.push_back(alert.rule);
    if (alert_log_) alert_log_->write(alert);
    if (options_.on_alert) options_.on_alert(alert);
    emit(to_event(alert));
  }
  ++step_;
}

std::vector<EventRecord> Monitor::take_events() {
  std::vector<EventRecord> out;
  out.swap(events_);
  events_.reserve(out.capacity());
  return out;
}

nlohmann::json Monitor::probe_availability() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& probe : probes_) out[probe->name()] = availability_json(probe->availability());
  out["nvtx"] = !options_.nvtx ? availability_json(Availability{false, kDisabled})
                : nvtx_enabled()
                    ? availability_json(Availability{true, ""})
                    : availability_json(Availability{false, "built without NVTX3 headers"});
  return out;
}

std::optional<DispatchHook> Monitor::dispatcher_hook() const {
  if (dispatch_ == nullptr || !dispatch_->availability().available) return std::nullopt;
  return dispatch_->hook();
}

void Monitor::describe(RunHeader& header) const {
  header.probes = probe_availability();
  header.cupti = cupti_availability();
  // Only a run on the mode key names its hook: the callback's runs (every run before 0.9) keep
  // the headers they had, and `compare` lists the hook among two runs' configuration differences.
  const auto hook = dispatcher_hook();
  if (hook == DispatchHook::kModeKey) {
    if (!header.config.is_object()) header.config = nlohmann::json::object();
    header.config["dispatch_hook"] = dispatch_hook_name(*hook);
  }
}

Availability Monitor::cupti_availability() const {
  for (const auto& probe : probes_) {
    if (std::string_view(probe->name()) == sections::kCupti) return probe->availability();
  }
  return Availability{false, kDisabled};
}

}  // namespace recompdiag::probes
