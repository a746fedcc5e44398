#include "recompdiag/trainer/trainer.h"

#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "recompdiag/core/error.h"
#include "recompdiag/core/lr_plateau.h"
#include "recompdiag/probes/comm_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/trainer/memory_estimate.h"
#include "training/run_header.h"
#include "training/trainer_impl.h"

namespace recompdiag::trainer {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// FNV-1a (64-bit) over the parameters' bytes: ranks that stayed in step have equal digests.
std::string parameters_digest(const std::vector<float>& values) {
  uint64_t h = 14695981039346656037ULL;  // the FNV-1a offset basis (0.1.0 lacked its last digit)
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(float); ++i) {
    h = (h ^ bytes[i]) * 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string resolve_device(const std::string& requested) {
  check_device_name(requested);  // the syntax first: N is read below
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

void TwoPhaseTrainer::Impl::train_step(size_t b, const torch::Tensor* weights_arg, float host[3]) {
  adam->zero_grad();
  StepLosses losses = step->run(batches[b], params, weights_arg);
  losses.loss.backward();
  if (on_gradients_ready) on_gradients_ready(params, losses);
  clip_gradients(params, config.clip_value);
  adam->step();
  if (has(FaultKind::kHostSync)) {
    // The fault: the loss read on the host inside the step, as logging `loss.item()` does.
    volatile float logged = losses.loss.item<float>();
    (void)logged;
  }
  // The recorder's own host read: one copy of the three losses, marked so probes can tell it
  // from the training's syncs (the scope for the RecordFunction hook and other tools' traces).
  RECORD_USER_SCOPE(probes::kRecorderReadScope);
  const probes::RecorderRead recorder_read;
  torch::NoGradGuard no_grad;
  torch::Tensor all =
      torch::stack({losses.loss.detach(), losses.cat_loss.detach(), losses.bin_loss.detach()})
          .to(torch::kCPU, torch::kFloat);
  std::memcpy(host, all.data_ptr<float>(), 3 * sizeof(float));
}

void TwoPhaseTrainer::Impl::record_step(const StepPosition& at, size_t batch,
                                        const torch::Tensor* weights_arg, probes::Monitor* monitor,
                                        RecordSink& to, StepRecord& rec) {
  if (monitor) monitor->begin_step(at.step);
  const auto t0 = Clock::now();
  float host[3];
  train_step(batch, weights_arg, host);
  if (extra_work) extra_work->after_step(ms_between(t0, Clock::now()));
  if (monitor) monitor->planted_work();  // `recompdiag calibrate`'s, inside the step's time
  const auto t1 = Clock::now();

  rec.step = at.step;
  rec.phase = at.phase;
  rec.epoch = at.epoch;
  rec.step_in_phase = at.step_in_phase;
  rec.wall_ms = ms_between(t0, t1);
  rec.loss = host[0];
  rec.head_losses.resize(2);
  rec.head_losses[0] = host[1];
  rec.head_losses[1] = host[2];
  rec.lr = current_lr(*adam);
  rec.alerts.clear();
  if (monitor) monitor->end_step(rec);
  to.on_step(rec);
}

TwoPhaseTrainer::TwoPhaseTrainer(TrainConfig config) : impl_(std::make_unique<Impl>()) {
  config.validate();
  Impl& m = *impl_;
  m.config = std::move(config);
  const TrainConfig& c = m.config;
  m.device = torch::Device(resolve_device(c.device));
  // A config that cannot fit is bad input: refuse it before LibTorch's allocator aborts or the
  // kernel's OOM killer ends the process. On CUDA the data, model and step live on the device.
  if (m.device.is_cuda()) {
    check_fits(estimate_memory(c), available_device_memory(m.device.index()),
               "memory on " + m.device.str());
  } else {
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
  // Joins the job before anything is built: a rank that never comes fails every other rank here.
  if (c.distributed) {
    m.group = std::make_unique<trainer::detail::DataParallelGroup>(*c.distributed, m.device);
  }

  torch::manual_seed(c.seed);
  if (m.device.is_cuda()) torch::cuda::manual_seed_all(c.seed);
  m.model = SeqModel(c.input_size, c.hidden, c.num_classes, c.rnn);
  m.model->to(m.device);
  m.model->flatten_rnn_weights();         // on CUDA: one buffer for cuDNN, the same tensors
  m.params = m.model->step_parameters();  // Module::to moves data in place: same tensors
  m.batches = make_synthetic_batches(c, m.device);
  if (m.group) m.group->shard(m.batches);  // every rank drew the same batches: same seed
  // Phase 1's optimizer exists from the start so the monitor can inspect it from step 0.
  m.adam = make_adam(m.params, c.phases.front().lr, c.adam_epsilon);
  m.lr_requested = c.phases.front().lr;
  if (c.monitor) {
    probes::MonitorOptions options;
    options.expected_device = m.device.str();
    options.event_sink = &m.sinks;
    options.log_alerts = c.log_alerts;
    options.dispatcher_sample_every = c.dispatch_sample_every;
    options.dispatcher_hook = probes::parse_dispatch_hook(c.dispatch_hook, "--dispatch-hook");
    options.comm = m.group != nullptr;
    options.take_turns = !m.group || m.group->rank() == 0;  // a job takes its turns as one
    options.step_turns = !m.group;                          // ... at epoch boundaries
    m.monitor = std::make_unique<probes::Monitor>(*m.model, *m.adam, options);
    m.monitor->set_requested_lr(c.phases.front().lr);
  }

  m.take_turns_from_environment();

  m.header = trainer::detail::make_run_header(c, m.device.str(), torch::cuda::is_available(),
                                              m.monitor.get());
  m.header.turn_every_steps = m.turn_every_steps;
  if (m.monitor) m.header.planted_slowdown_pct = m.monitor->planted_slowdown_pct();
  if (m.group) {
    m.header.rank = m.group->rank();
    m.header.world_size = m.group->world_size();
    m.header.job_id = m.group->job_id();
    m.on_gradients_ready = [&m, step = int64_t{0}](const std::vector<torch::Tensor>& params,
                                                   StepLosses& losses) mutable {
      const trainer::detail::CollectiveCost cost = m.group->average_step(
          params, losses, step++, m.stop_requested.load(std::memory_order_relaxed));
      if (cost.stop) m.job_stop = true;
      if (m.monitor && m.monitor->comm()) {
        m.monitor->comm()->record_collective(cost.bytes, cost.wait_ms);
      }
    };
  }
}

void TwoPhaseTrainer::Impl::take_turns_from_environment() {
  const bool rank0 = !group || group->rank() == 0;
  if (monitor && rank0) {
    turn_every_steps = monitor->turn_every_steps();
    turns_at_epochs = monitor->takes_turns() && turn_every_steps == 0;
    return;
  }
  std::unique_ptr<TurnChannel> channel = TurnChannel::from_environment();
  // A job takes its turns as one, at epoch boundaries, whatever the channel says.
  if (channel && !group) turn_every_steps = channel->spec().every_steps;
  turns_at_epochs = channel != nullptr && turn_every_steps == 0;
  // Another rank's copy of rank 0's channel closes here: rank 0 alone holds the job's turn.
  if (rank0) turns = std::move(channel);
}

void TwoPhaseTrainer::Impl::take_turn(int64_t at_step, int phase) {
  if (monitor && monitor->takes_turns()) {
    monitor->take_turn();
  } else if (turns && turns->wait_turn() == TurnWait::kTimedOut) {
    emit(turns->timeout_event(at_step, phase));
  }
}

TwoPhaseTrainer::~TwoPhaseTrainer() = default;

void TwoPhaseTrainer::add_sink(RecordSink& sink) { impl_->sinks.add(sink); }

void TwoPhaseTrainer::set_progress(trainer::ProgressSink* progress) { impl_->progress = progress; }

void TwoPhaseTrainer::request_stop() noexcept { impl_->stop_requested.store(true); }

void TwoPhaseTrainer::set_epoch_barrier(std::function<void()> barrier) {
  impl_->epoch_barrier = std::move(barrier);
}

const RunHeader& TwoPhaseTrainer::header() const { return impl_->header; }

struct TwoPhaseTrainer::Impl::RunProgress {
  explicit RunProgress(const TrainConfig& config) : plateau(config.plateau) {
    rec.head_losses.resize(2);
  }
  Clock::time_point start = Clock::now();
  int64_t global_step = 0;
  int64_t alerts = 0;
  Clock::duration barrier_wait{0};  // time spent at epoch barriers, not training
  ReduceLrOnPlateau plateau;
  StepRecord rec;  // the latest step's, reused from step to step
};

struct TwoPhaseTrainer::Impl::EpochTotals {
  double loss = 0.0;
  double cat_loss = 0.0;
  double bin_loss = 0.0;
  double wall_ms = 0.0;
};

bool TwoPhaseTrainer::Impl::stopping() const {
  return group ? job_stop : stop_requested.load(std::memory_order_relaxed);
}

void TwoPhaseTrainer::Impl::take_step_turn(int64_t at_step, int phase, RunProgress& run) {
  if (monitor || !turns || turn_every_steps == 0 || at_step % turn_every_steps != 0) return;
  const auto wait_start = Clock::now();
  take_turn(at_step, phase);
  run.barrier_wait += Clock::now() - wait_start;
}

void TwoPhaseTrainer::Impl::wait_turn(RunProgress& run, int phase) {
  if (!epoch_barrier && !turns_at_epochs) return;
  const auto wait_start = Clock::now();
  // A data-parallel job takes its turn as one: every rank has finished the epoch before any
  // waits, and none starts the next before the turn has come (to rank 0, which holds it).
  if (group) group->barrier(run.global_step);
  if (epoch_barrier) {
    epoch_barrier();
  } else {
    take_turn(run.global_step, phase);
  }
  if (group) group->barrier(run.global_step);
  run.barrier_wait += Clock::now() - wait_start;
}

void TwoPhaseTrainer::Impl::run_phase(size_t index, RunProgress& run) {
  const PhaseConfig& phase = config.phases[index];
  const int phase_no = static_cast<int>(index + 1);
  wait_turn(run, phase_no);  // a phase's setup (the switch: compile, rebuild) is its first epoch's
  begin_phase(index, run);
  // A new fit() call in Keras starts its callbacks afresh.
  run.plateau.reset();
  run.rec.loss_weights = phase.loss_weights;
  int64_t step_in_phase = 0;
  for (int epoch = 0; epoch < phase.epochs && !stopping(); ++epoch) {
    if (epoch > 0) {
      wait_turn(run, phase_no);
      start_epoch(phase, run.global_step, phase_no, epoch);
    }
    const EpochTotals totals = run_epoch(phase_no, epoch, step_in_phase, run);
    if (stopping()) break;  // a partial epoch: no progress line, no plateau decision
    end_epoch(phase, phase_no, epoch, totals, run);
  }
}

void TwoPhaseTrainer::Impl::begin_phase(size_t index, RunProgress& run) {
  const PhaseConfig& phase = config.phases[index];
  const int phase_no = static_cast<int>(index + 1);
  emit({EventKind::kPhaseStart,
        run.global_step,
        phase_no,
        "phase " + std::to_string(phase_no) + ": " + std::to_string(phase.epochs) +
            " epochs, loss weights " + format_weights(phase.loss_weights) + ", lr " +
            format_lr(phase.lr),
        {{"phase", phase_no},
         {"epochs", phase.epochs},
         {"loss_weights", phase.loss_weights},
         {"lr", phase.lr}}});
  if (index > 0) {
    switch_phase(index, run.global_step);
    return;
  }
  if (config.mode == TrainMode::kMutable) {
    loss_weights = torch::tensor(phase.loss_weights, torch::kFloat).to(device);
  }
  compile(phase.loss_weights, run.global_step, phase_no, "initial");
}

TwoPhaseTrainer::Impl::EpochTotals TwoPhaseTrainer::Impl::run_epoch(int phase, int epoch,
                                                                    int64_t& step_in_phase,
                                                                    RunProgress& run) {
  const torch::Tensor* weights_arg = config.mode == TrainMode::kMutable ? &loss_weights : nullptr;
  StepRecord& rec = run.rec;
  EpochTotals totals;
  for (int b = 0; b < config.steps_per_epoch && !stopping(); ++b) {
    take_step_turn(run.global_step, phase, run);
    record_step({run.global_step, phase, epoch, step_in_phase}, static_cast<size_t>(b), weights_arg,
                monitor.get(), sinks, rec);
    run.alerts += static_cast<int64_t>(rec.alerts.size());
    totals.loss += rec.loss;
    totals.cat_loss += rec.head_losses[0];
    totals.bin_loss += rec.head_losses[1];
    totals.wall_ms += rec.wall_ms;
    ++run.global_step;
    ++step_in_phase;
  }
  return totals;
}

void TwoPhaseTrainer::Impl::end_epoch(const PhaseConfig& phase_config, int phase, int epoch,
                                      const EpochTotals& totals, RunProgress& run) {
  const double n = config.steps_per_epoch;
  const double lr = current_lr(*adam);
  if (progress) {
    progress->on_epoch_end({to_string(config.mode), phase, epoch, phase_config.epochs,
                            run.global_step, totals.loss / n, totals.cat_loss / n,
                            totals.bin_loss / n, lr, totals.wall_ms / n});
  }
  if (auto new_lr = run.plateau.on_epoch_end(totals.loss / n, lr)) {
    change_lr(*new_lr);
    emit({EventKind::kLrChange,
          run.global_step,
          phase,
          "ReduceLROnPlateau: epoch loss did not improve for " +
              std::to_string(config.plateau.patience) + " epochs; lr " + format_lr(lr) + " -> " +
              format_lr(*new_lr),
          {{"from", lr}, {"to", *new_lr}, {"cause", "plateau"}}});
  }
}

RunSummary TwoPhaseTrainer::Impl::summarize(const RunProgress& run,
                                            const std::vector<float>& final_parameters,
                                            bool failed) const {
  RunSummary sum;
  sum.parameters_digest = parameters_digest(final_parameters);
  sum.steps = run.global_step;
  // Not the time spent waiting for turns, the other run's: at epoch barriers it is in
  // barrier_wait, step by step in the monitor's begin_step.
  const double turn_wait_s = monitor && turn_every_steps > 0 ? monitor->turn_wait_s() : 0.0;
  sum.elapsed_s =
      std::chrono::duration<double>(Clock::now() - run.start - run.barrier_wait).count() -
      turn_wait_s;
  sum.compiles = compiles;
  sum.alerts = run.alerts;
  sum.final_loss = run.rec.loss;
  sum.final_head_losses = run.rec.head_losses;
  if (stopping()) sum.status = "interrupted";
  if (failed) sum.status = "failed";
  return sum;
}

TrainResult TwoPhaseTrainer::run() {
  Impl& m = *impl_;
  TORCH_CHECK(!m.ran, "TwoPhaseTrainer::run can be called once");
  m.ran = true;
  m.sinks.on_run_start(m.header);

  TrainResult result;
  Impl::RunProgress run(m.config);
  // A data-parallel rank whose job failed around it (a peer died, a collective timed out) still
  // ends its file with a summary, marked failed, of the steps it completed; then it fails.
  std::exception_ptr job_failure;
  try {
    for (size_t pi = 0; pi < m.config.phases.size() && !m.stopping(); ++pi) {
      m.run_phase(pi, run);
      result.adam_step_at_phase_end.push_back(adam_step_of(*m.adam, m.params.front()));
    }
  } catch (const JobError&) {
    job_failure = std::current_exception();
  }

  for (const torch::Tensor& p : m.params) {
    torch::Tensor flat = p.detach().to(torch::kCPU).contiguous().view(-1);
    result.final_parameters.insert(result.final_parameters.end(), flat.data_ptr<float>(),
                                   flat.data_ptr<float>() + flat.numel());
  }
  result.summary = m.summarize(run, result.final_parameters, job_failure != nullptr);
  m.sinks.on_run_end(result.summary);
  if (job_failure) std::rethrow_exception(job_failure);

  result.compiles = m.compiles;
  return result;
}

std::vector<double> TwoPhaseTrainer::time_steps(int steps,
                                                const probes::MonitorOptions* monitor_options,
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
  std::unique_ptr<probes::Monitor> monitor;
  if (monitor_options) {
    probes::MonitorOptions options = *monitor_options;
    options.take_turns = false;  // benchmark blocks take no turns with anyone
    options.expected_device = m.device.str();
    monitor = std::make_unique<probes::Monitor>(*m.model, *m.adam, options);
    monitor->set_requested_lr(current_lr(*m.adam));
    monitor->watch(m.step->unit());
  }
  const torch::Tensor* weights_arg = c.mode == TrainMode::kMutable ? &m.loss_weights : nullptr;
  RecordFanOut to;
  if (sink) to.add(*sink);
  StepRecord rec;
  rec.loss_weights = phase.loss_weights;
  std::vector<double> times;
  times.reserve(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const auto t0 = Clock::now();
    const int64_t at = m.bench_step++;
    m.record_step({at, 1, 0, at}, static_cast<size_t>(at % c.steps_per_epoch), weights_arg,
                  monitor.get(), to, rec);
    times.push_back(ms_between(t0, Clock::now()));
  }
  return times;
}

}  // namespace recompdiag::trainer
