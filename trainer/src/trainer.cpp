#include "recompdiag/trainer/trainer.h"

#include <torch/version.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>

#include "detail/extra_work.h"
#include "detail/fault_effects.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/version.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/trainer/memory_estimate.h"
#include "recompdiag/trainer/model.h"
#include "recompdiag/trainer/plateau.h"

namespace recompdiag {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string format_lr(double lr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", lr);
  return buf;
}

}  // namespace

std::string resolve_device(const std::string& requested) {
  const bool cuda = torch::cuda::is_available();
  if (requested == "cpu") return "cpu";
  if (requested == "auto") return cuda ? "cuda:0" : "cpu";
  if (!cuda) {
    throw InputError("--device " + requested +
                     ": CUDA is not available (LibTorch " TORCH_VERSION
                     " sees no CUDA device on this machine)");
  }
  if (requested == "cuda") return "cuda:0";
  const int64_t index = std::stoll(requested.substr(5));
  if (index >= static_cast<int64_t>(torch::cuda::device_count())) {
    throw InputError("--device " + requested + ": only " +
                     std::to_string(torch::cuda::device_count()) + " CUDA device(s) visible");
  }
  return requested;
}

struct TwoPhaseTrainer::Impl {
  TrainConfig config;
  torch::Device device{torch::kCPU};
  RunHeader header;
  std::vector<RecordSink*> sinks;
  bool progress = false;
  bool ran = false;
  std::function<void()> epoch_barrier;
  std::atomic<bool> stop_requested{false};  // request_stop(), from a signal handler

  SeqModel model{nullptr};
  std::vector<torch::Tensor> params;
  std::vector<Batch> batches;
  std::unique_ptr<CompiledStep> step;
  std::unique_ptr<torch::optim::Adam> adam;
  torch::Tensor loss_weights;  // mutable mode: the tensor the compiled step reads
  int64_t compiles = 0;
  int64_t bench_step = 0;  // time_steps() only

  /// Hands the monitor's events (ours and its alerts) to every sink.
  struct EventFanOut : RecordSink {
    std::vector<RecordSink*>* sinks = nullptr;
    void on_event(const EventRecord& e) override {
      for (RecordSink* s : *sinks) s->on_event(e);
    }
  } fan_out;
  std::unique_ptr<Monitor> monitor;               // null with --no-monitor
  std::unique_ptr<detail::ExtraWork> extra_work;  // the extra-work fault; null when healthy
  // Faults (faults.h): what `leak` keeps alive, and `deopt`'s hold on the profiling count.
  std::vector<std::unique_ptr<CompiledStep>> leaked_steps;
  std::vector<std::unique_ptr<torch::optim::Adam>> leaked_optimizers;
  std::unique_ptr<detail::ProfilingNeverCompletes> deopt;
  double lr_requested = 0.0;  // the lr last asked for: in effect unless lr-trap

  bool has(FaultKind kind) const { return config.faults.has(kind); }

  /// Records an event: through the monitor when it runs (so its rules know compile reasons and
  /// phases), straight to the sinks when it does not.
  void emit(const EventRecord& e) {
    if (monitor) {
      monitor->note_event(e.kind, e.reason, e.detail);
    } else {
      fan_out.on_event(e);
    }
  }

  /// One optimisation step on batch `b`; writes (loss, cat loss, bin loss) to `host`.
  void train_step(size_t b, const torch::Tensor* weights_arg, float host[3]) {
    adam->zero_grad();
    StepLosses losses = step->run(batches[b], params, weights_arg);
    losses.loss.backward();
    clip_gradients(params, config.clip_value);
    adam->step();
    if (has(FaultKind::kHostSync)) {
      // The fault: the loss read on the host inside the step, as logging `loss.item()` does.
      volatile float logged = losses.loss.item<float>();
      (void)logged;
    }
    // The recorder's own host read: one copy of the three losses, marked so probes can tell it
    // from the training's syncs.
    RECORD_USER_SCOPE("recompdiag::recorder_read");
    torch::NoGradGuard no_grad;
    torch::Tensor all =
        torch::stack({losses.loss.detach(), losses.cat_loss.detach(), losses.bin_loss.detach()})
            .to(torch::kCPU, torch::kFloat);
    std::memcpy(host, all.data_ptr<float>(), 3 * sizeof(float));
  }

  void use_optimizer(std::unique_ptr<torch::optim::Adam> rebuilt, double requested_lr) {
    if (has(FaultKind::kLeak) && adam) leaked_optimizers.push_back(std::move(adam));
    adam = std::move(rebuilt);
    lr_requested = requested_lr;
    if (monitor) {
      monitor->set_optimizer(*adam);
      monitor->set_requested_lr(requested_lr);
    }
  }

  void compile(const std::vector<double>& weights, int64_t at_step, int phase,
               const std::string& reason) {
    StepSpec spec;
    spec.rnn = config.rnn;
    spec.hidden = config.hidden;
    if (config.mode == TrainMode::kRecompile) spec.constant_loss_weights = weights;
    auto t0 = Clock::now();
    if (has(FaultKind::kLeak) && step) leaked_steps.push_back(std::move(step));
    step = std::make_unique<CompiledStep>(spec);
    ++compiles;
    if (monitor) monitor->watch(step->unit());
    emit({EventKind::kCompile,
          at_step,
          phase,
          reason,
          {{"loss_weights_baked", config.mode == TrainMode::kRecompile},
           {"loss_weights", weights},
           {"compile_ms", ms_between(t0, Clock::now())},
           {"compiles", compiles}}});
  }

  /// Sets the lr in place in every param group; with `lr-trap`, on a copy of the options.
  void change_lr(double lr) {
    if (has(FaultKind::kLrTrap)) {
      detail::set_lr_on_copy(*adam, lr);
    } else {
      set_lr(*adam, lr);
    }
    lr_requested = lr;
    if (monitor) monitor->set_requested_lr(lr);
  }

  /// Rebuilds Adam, by `handoff`; with `lr-trap` the new lr goes to a copy of the old options.
  void rebuild_optimizer(double lr, OptimizerHandoff handoff, int64_t at_step, int phase) {
    auto rebuilt =
        make_adam(params, has(FaultKind::kLrTrap) ? current_lr(*adam) : lr, config.adam_epsilon);
    if (has(FaultKind::kLrTrap)) detail::set_lr_on_copy(*rebuilt, lr);
    if (handoff == OptimizerHandoff::kMigrate) migrate_adam_state(*adam, *rebuilt, params);
    use_optimizer(std::move(rebuilt), lr);
    emit({EventKind::kOptimizerRebuild,
          at_step,
          phase,
          handoff == OptimizerHandoff::kMigrate
              ? "Adam rebuilt for lr " + format_lr(lr) + "; state migrated onto " + device.str()
              : "Adam rebuilt for lr " + format_lr(lr) + " with empty state (fresh)",
          {{"handoff", to_string(handoff)}, {"lr", lr}}});
  }

  void switch_phase(size_t index, int64_t at_step) {
    const PhaseConfig& from = config.phases[index - 1];
    const PhaseConfig& to = config.phases[index];
    const int phase = static_cast<int>(index + 1);
    const std::string what = "phase " + std::to_string(phase) + ": loss weights " +
                             format_weights(from.loss_weights) + " -> " +
                             format_weights(to.loss_weights) + ", lr " + format_lr(from.lr) +
                             " -> " + format_lr(to.lr);
    const bool recompile_mode = config.mode == TrainMode::kRecompile;
    // fresh-optimizer and deopt recompile at the switch in either mode; fresh-optimizer also
    // rebuilds Adam, with empty state.
    const bool fresh = has(FaultKind::kFreshOptimizer);
    const bool recompile = recompile_mode || fresh || has(FaultKind::kDeopt);
    if (!recompile_mode) {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < to.loss_weights.size(); ++i) {
        loss_weights[static_cast<int64_t>(i)].fill_(to.loss_weights[i]);
      }
      emit({EventKind::kLossWeightsChange,
            at_step,
            phase,
            what,
            {{"from", from.loss_weights}, {"to", to.loss_weights}}});
    }
    if (recompile) {
      // deopt: the new step's executor starts profiling while this is held, and never finishes.
      if (has(FaultKind::kDeopt)) deopt = std::make_unique<detail::ProfilingNeverCompletes>();
      // Keras bakes loss weights into the compiled function: changing them means compiling again,
      // with an optimizer built for the new lr.
      compile(to.loss_weights, at_step, phase,
              recompile_mode ? what : what + " (fault: " + config.faults.to_string() + ")");
    }
    if (recompile_mode || fresh) {
      OptimizerHandoff handoff = config.handoff;
      if (has(FaultKind::kStateDtype)) handoff = OptimizerHandoff::kMigrate;
      if (fresh) handoff = OptimizerHandoff::kFresh;
      rebuild_optimizer(to.lr, handoff, at_step, phase);
    } else {
      const double old_lr = current_lr(*adam);
      change_lr(to.lr);
      emit({EventKind::kLrChange,
            at_step,
            phase,
            "phase " + std::to_string(phase) + ": lr " + format_lr(old_lr) + " -> " +
                format_lr(to.lr) + " set in place",
            {{"from", old_lr}, {"to", to.lr}, {"cause", "phase"}}});
    }
    // state-dtype: the carried-over moments land in float64.
    if (has(FaultKind::kStateDtype)) detail::cast_adam_state(*adam, torch::kDouble);
  }

  /// recompile-storm and leak: before every epoch but a phase's first, the step is compiled
  /// again, as when a value that changes every epoch (the lr) is a compile-time constant; leak
  /// also rebuilds Adam (state migrated) and keeps every old unit and optimizer alive.
  void start_epoch(const PhaseConfig& phase_config, int64_t at_step, int phase, int epoch) {
    if (!has(FaultKind::kRecompileStorm) && !has(FaultKind::kLeak)) return;
    const double lr = current_lr(*adam);
    compile(phase_config.loss_weights, at_step, phase,
            "epoch " + std::to_string(epoch) + " of phase " + std::to_string(phase) +
                ": recompiled because the lr (" + format_lr(lr) +
                ") is a compile-time constant of the step (fault: " + config.faults.to_string() +
                ")");
    if (has(FaultKind::kLeak)) {
      rebuild_optimizer(lr_requested, OptimizerHandoff::kMigrate, at_step, phase);
    }
  }
};

TwoPhaseTrainer::TwoPhaseTrainer(TrainConfig config) : impl_(std::make_unique<Impl>()) {
  config.validate();
  Impl& m = *impl_;
  m.config = std::move(config);
  const TrainConfig& c = m.config;
  m.device = torch::Device(resolve_device(c.device));
  // A config that cannot fit is bad input: refuse it before LibTorch's allocator aborts or the
  // kernel's OOM killer ends the process. (On CUDA the device's memory is not checked yet.)
  if (!m.device.is_cuda()) {
    check_fits(estimate_memory(c), available_host_memory(), "host memory");
  }
  for (FaultKind kind : c.faults.kinds) {
    const FaultInfo& info = fault_info(kind);
    if (info.needs_cuda && !m.device.is_cuda()) {
      throw InputError(std::string("--fault ") + info.name + " needs CUDA (the model is on " +
                       m.device.str() + ")");
    }
    if (kind == FaultKind::kExtraWork) {
      m.extra_work = std::make_unique<detail::ExtraWork>(c.faults.extra_work_pct);
    }
  }
  if (c.threads > 0) torch::set_num_threads(c.threads);

  torch::manual_seed(c.seed);
  if (m.device.is_cuda()) torch::cuda::manual_seed_all(c.seed);
  m.model = SeqModel(c.input_size, c.hidden, c.num_classes, c.rnn);
  m.model->to(m.device);
  m.params = m.model->step_parameters();  // Module::to moves data in place: same tensors
  m.batches = make_synthetic_batches(c, m.device);
  // Phase 1's optimizer exists from the start so the monitor can inspect it from step 0.
  m.adam = make_adam(m.params, c.phases.front().lr, c.adam_epsilon);
  m.lr_requested = c.phases.front().lr;
  m.fan_out.sinks = &m.sinks;
  if (c.monitor) {
    MonitorOptions options;
    options.expected_device = m.device.str();
    options.event_sink = &m.fan_out;
    options.log_alerts = c.log_alerts;
    options.dispatcher_sample_every = c.dispatch_sample_every;
    m.monitor = std::make_unique<Monitor>(*m.model, *m.adam, options);
    m.monitor->set_requested_lr(c.phases.front().lr);
  }

  RunHeader& h = m.header;
  h.tool_version = kToolVersion;
  h.mode = to_string(c.mode);
  h.optimizer_handoff = c.mode == TrainMode::kRecompile ? to_string(c.handoff) : "none";
  h.optimizer = "Adam";
  h.device_requested = c.device;
  h.device_used = m.device.str();
  h.torch_version = TORCH_VERSION;
  h.cuda_available = torch::cuda::is_available();
  if (m.monitor) {
    h.cupti = m.monitor->cupti_availability();
    h.probes = m.monitor->probe_availability();
  } else {
    h.cupti = {false, "unavailable: monitor off (--no-monitor)"};
    h.probes = {
        {"monitor", {{"available", false}, {"reason", "unavailable: monitor off (--no-monitor)"}}}};
  }
  h.step_timing = m.device.is_cuda()
                      ? "host steady clock around the step; ends after the loss read, which "
                        "synchronises with the device, so device work is included"
                      : "host steady clock around the step";
  h.config = c.to_json();
  h.seed = c.seed;
  h.start_time = utc_now_iso();
  h.host = host_name();
}

TwoPhaseTrainer::~TwoPhaseTrainer() = default;

void TwoPhaseTrainer::add_sink(RecordSink& sink) { impl_->sinks.push_back(&sink); }

void TwoPhaseTrainer::set_progress(bool on) { impl_->progress = on && ::isatty(STDOUT_FILENO); }

void TwoPhaseTrainer::request_stop() noexcept { impl_->stop_requested.store(true); }

void TwoPhaseTrainer::set_epoch_barrier(std::function<void()> barrier) {
  impl_->epoch_barrier = std::move(barrier);
}

const RunHeader& TwoPhaseTrainer::header() const { return impl_->header; }

TrainResult TwoPhaseTrainer::run() {
  Impl& m = *impl_;
  TORCH_CHECK(!m.ran, "TwoPhaseTrainer::run can be called once");
  m.ran = true;
  const TrainConfig& c = m.config;
  for (RecordSink* s : m.sinks) s->on_run_start(m.header);

  TrainResult result;
  ReduceLrOnPlateau plateau(c.plateau);
  const auto run_start = Clock::now();
  int64_t global_step = 0;
  int64_t alerts = 0;
  Clock::duration barrier_wait{0};  // time spent at epoch barriers, not training
  auto wait_turn = [&] {
    if (!m.epoch_barrier) return;
    const auto wait_start = Clock::now();
    m.epoch_barrier();
    barrier_wait += Clock::now() - wait_start;
  };
  StepRecord rec;
  rec.head_losses.resize(2);

  // Checked between steps: a stop lets the step in flight finish and be recorded.
  auto stopping = [&] { return m.stop_requested.load(std::memory_order_relaxed); };
  for (size_t pi = 0; pi < c.phases.size() && !stopping(); ++pi) {
    const PhaseConfig& phase = c.phases[pi];
    const int phase_no = static_cast<int>(pi + 1);
    wait_turn();  // a phase's setup (the switch: compile, rebuild) belongs to its first epoch
    m.emit({EventKind::kPhaseStart,
            global_step,
            phase_no,
            "phase " + std::to_string(phase_no) + ": " + std::to_string(phase.epochs) +
                " epochs, loss weights " + format_weights(phase.loss_weights) + ", lr " +
                format_lr(phase.lr),
            {{"phase", phase_no},
             {"epochs", phase.epochs},
             {"loss_weights", phase.loss_weights},
             {"lr", phase.lr}}});
    if (pi == 0) {
      if (c.mode == TrainMode::kMutable) {
        m.loss_weights = torch::tensor(phase.loss_weights, torch::kFloat).to(m.device);
      }
      m.compile(phase.loss_weights, global_step, phase_no, "initial");
    } else {
      m.switch_phase(pi, global_step);
    }
    // A new fit() call in Keras starts its callbacks afresh.
    plateau.reset();
    const torch::Tensor* weights_arg = c.mode == TrainMode::kMutable ? &m.loss_weights : nullptr;
    rec.loss_weights = phase.loss_weights;
    int64_t step_in_phase = 0;

    for (int epoch = 0; epoch < phase.epochs && !stopping(); ++epoch) {
      if (epoch > 0) {
        wait_turn();
        m.start_epoch(phase, global_step, phase_no, epoch);
      }
      double epoch_loss = 0, epoch_cat = 0, epoch_bin = 0, epoch_ms = 0;
      for (int b = 0; b < c.steps_per_epoch && !stopping(); ++b) {
        if (m.monitor) m.monitor->begin_step(global_step);
        const auto t0 = Clock::now();
        float host[3];
        m.train_step(static_cast<size_t>(b), weights_arg, host);
        if (m.extra_work) m.extra_work->after_step(ms_between(t0, Clock::now()));
        const auto t1 = Clock::now();

        rec.step = global_step;
        rec.phase = phase_no;
        rec.epoch = epoch;
        rec.step_in_phase = step_in_phase;
        rec.wall_ms = ms_between(t0, t1);
        rec.loss = host[0];
        rec.head_losses[0] = host[1];
        rec.head_losses[1] = host[2];
        rec.lr = current_lr(*m.adam);
        if (m.monitor) {
          rec.alerts.clear();
          m.monitor->end_step(rec);
          alerts += static_cast<int64_t>(rec.alerts.size());
        }
        for (RecordSink* s : m.sinks) s->on_step(rec);

        epoch_loss += host[0];
        epoch_cat += host[1];
        epoch_bin += host[2];
        epoch_ms += rec.wall_ms;
        ++global_step;
        ++step_in_phase;
      }
      if (stopping()) break;  // a partial epoch: no progress line, no plateau decision
      const double n = c.steps_per_epoch;
      const double lr = current_lr(*m.adam);
      if (m.progress) {
        std::printf(
            "%s: phase %d epoch %d/%d - step %lld - loss %.4f - cat %.4f - bin %.4f - lr %g - %.2f "
            "ms/step\n",
            to_string(c.mode), phase_no, epoch + 1, phase.epochs,
            static_cast<long long>(global_step), epoch_loss / n, epoch_cat / n, epoch_bin / n, lr,
            epoch_ms / n);
        std::fflush(stdout);
      }
      if (auto new_lr = plateau.on_epoch_end(epoch_loss / n, lr)) {
        m.change_lr(*new_lr);
        m.emit({EventKind::kLrChange,
                global_step,
                phase_no,
                "ReduceLROnPlateau: epoch loss did not improve for " +
                    std::to_string(c.plateau.patience) + " epochs; lr " + format_lr(lr) + " -> " +
                    format_lr(*new_lr),
                {{"from", lr}, {"to", *new_lr}, {"cause", "plateau"}}});
      }
    }
    result.adam_step_at_phase_end.push_back(adam_step_of(*m.adam, m.params.front()));
  }

  RunSummary& sum = result.summary;
  sum.steps = global_step;
  sum.elapsed_s = std::chrono::duration<double>(Clock::now() - run_start - barrier_wait).count();
  sum.compiles = m.compiles;
  sum.alerts = alerts;
  sum.final_loss = rec.loss;
  sum.final_head_losses = rec.head_losses;
  if (stopping()) sum.status = "interrupted";
  for (RecordSink* s : m.sinks) s->on_run_end(sum);

  result.compiles = m.compiles;
  for (const torch::Tensor& p : m.params) {
    torch::Tensor flat = p.detach().to(torch::kCPU).contiguous().view(-1);
    result.final_parameters.insert(result.final_parameters.end(), flat.data_ptr<float>(),
                                   flat.data_ptr<float>() + flat.numel());
  }
  return result;
}

std::vector<double> TwoPhaseTrainer::time_steps(int steps, const MonitorOptions* monitor_options,
                                                RecordSink* sink) {
  Impl& m = *impl_;
  TORCH_CHECK(!m.ran, "time_steps is for a trainer that does not run()");
  const TrainConfig& c = m.config;
  const PhaseConfig& phase = c.phases.front();
  if (!m.step) {
    StepSpec spec;
    spec.rnn = c.rnn;
    spec.hidden = c.hidden;
    if (c.mode == TrainMode::kRecompile) {
      spec.constant_loss_weights = phase.loss_weights;
    } else {
      m.loss_weights = torch::tensor(phase.loss_weights, torch::kFloat).to(m.device);
    }
    m.step = std::make_unique<CompiledStep>(spec);
  }
  // The monitor built in the constructor would observe every block; benchmarks attach their own.
  m.monitor.reset();
  std::unique_ptr<Monitor> monitor;
  if (monitor_options) {
    MonitorOptions options = *monitor_options;
    options.expected_device = m.device.str();
    monitor = std::make_unique<Monitor>(*m.model, *m.adam, options);
    monitor->set_requested_lr(current_lr(*m.adam));
    monitor->watch(m.step->unit());
  }
  const torch::Tensor* weights_arg = c.mode == TrainMode::kMutable ? &m.loss_weights : nullptr;
  StepRecord rec;
  rec.head_losses.resize(2);
  rec.loss_weights = phase.loss_weights;
  std::vector<double> times;
  times.reserve(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const auto t0 = Clock::now();
    if (monitor) monitor->begin_step(m.bench_step);
    float host[3];
    m.train_step(static_cast<size_t>(m.bench_step % c.steps_per_epoch), weights_arg, host);
    rec.step = m.bench_step++;
    rec.wall_ms = ms_between(t0, Clock::now());
    rec.loss = host[0];
    rec.head_losses[0] = host[1];
    rec.head_losses[1] = host[2];
    rec.lr = current_lr(*m.adam);
    if (monitor) {
      rec.alerts.clear();
      monitor->end_step(rec);
    }
    if (sink) sink->on_step(rec);
    times.push_back(ms_between(t0, Clock::now()));
  }
  return times;
}

}  // namespace recompdiag
