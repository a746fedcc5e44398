// A Monitor that writes its run file: header, steps, events, summary.

#include "recompdiag/probes/run_recorder.h"

#include <ATen/record_function.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <chrono>
#include <exception>

#include "recompdiag/core/error.h"
#include "recompdiag/core/this_host.h"
#include "recompdiag/core/version.h"
#include "recompdiag/probes/dispatcher_probe.h"

namespace recompdiag::probes {

namespace {

// The header the options describe, checked before anything is opened: a bad option leaves no
// file behind (and an earlier run's file whole). The probes' availability comes with the Monitor.
RunHeader header_of(const RunRecorderOptions& options) {
  options.validate();
  RunHeader h = run_header_here();
  h.mode = options.mode;
  h.optimizer_handoff = "none";
  h.optimizer = options.optimizer;
  h.device_requested = options.monitor.expected_device;
  h.device_used = options.monitor.expected_device;
  // Asked only when the writer does not say (a CPU-only process need not load CUDA for it).
  h.cuda_available =
      options.header.contains("cuda_available") ? false : torch::cuda::is_available();
  h.step_timing = step_timing_for(options.monitor.expected_device);
  h.config = options.config;
  h.seed = options.seed;
  if (options.header.empty()) return h;
  // The writer's own fields, read as a run file's header is: one parser, its checks included.
  nlohmann::ordered_json line = nlohmann::ordered_json::parse(to_json_line(h));
  for (const auto& [key, value] : options.header.items()) line[key] = value;
  return parse_run_file(line.dump(), "RunRecorderOptions::header").header;
}

}  // namespace

void RunRecorderOptions::validate() const {
  if (out.empty() && sinks.empty()) throw InputError("RunRecorderOptions::out: no run file given");
  monitor.validate();
  if (!header.is_object()) throw InputError("RunRecorderOptions::header: not a JSON object");
  if (!config.is_object()) throw InputError("RunRecorderOptions::config: not a JSON object");
}

RunHeader run_header_here() {
  RunHeader h;
  h.tool_version = kToolVersion;
  h.torch_version = TORCH_VERSION;
  h.start_time = utc_now_iso();
  h.host = this_host_name();
  return h;
}

std::string step_timing_for(const std::string& device) {
  return device.rfind("cuda", 0) == 0
             ? "host steady clock around the step; ends after the loss read, which synchronises "
               "with the device, so device work is included"
             : "host steady clock around the step";
}

RunRecorder::RunRecorder(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         RunRecorderOptions options)
    : RunRecorder(std::move(options), [&](MonitorOptions o) {
        return std::make_unique<Monitor>(model, optimizer, std::move(o));
      }) {}

RunRecorder::RunRecorder(TrainingStateSource source, RunRecorderOptions options)
    : RunRecorder(std::move(options), [&](MonitorOptions o) {
        return std::make_unique<Monitor>(std::move(source), std::move(o));
      }) {}

RunRecorder::RunRecorder(
    RunRecorderOptions options,
    const std::function<std::unique_ptr<Monitor>(MonitorOptions)>& make_monitor)
    : header_(header_of(options)),
      start_(std::chrono::steady_clock::now()),
      close_on_destruction_(options.close_on_destruction) {
  // The Monitor first: when it refuses to start, no file has been opened (nor an earlier run's
  // truncated). It sends nothing before the header below.
  options.monitor.event_sink = &sinks_;
  monitor_ = make_monitor(options.monitor);
  if (!options.out.empty()) sinks_.add(file_.emplace(options.out));
  for (RecordSink* sink : options.sinks) {
    if (sink != nullptr) sinks_.add(*sink);
  }
  // The Monitor's probes, and those the writer runs itself (its header's) beside them.
  const nlohmann::json writer_probes = header_.probes;
  monitor_->describe(header_);
  if (writer_probes.is_object()) header_.probes.update(writer_probes);
  header_.turn_every_steps = monitor_->turn_every_steps();  // under `ab`: how its steps pair
  header_.planted_slowdown_pct = monitor_->planted_slowdown_pct();  // `calibrate`'s slowed side
  sinks_.on_run_start(header_);
}

RunRecorder::~RunRecorder() {
  if (!close_on_destruction_) return;
  try {
    // Destroyed while an exception unwinds the training loop: the run did not finish.
    close(std::uncaught_exceptions() > 0 ? "failed" : "completed");
  } catch (...) {
    // A destructor must not throw; every step is already on disk.
  }
}

const StepRecord& RunRecorder::end_step(const at::Tensor& loss) {
  double value = 0.0;
  {
    RECORD_USER_SCOPE(kRecorderReadScope);
    const RecorderRead recorder_read;
    value = loss.item<double>();  // any dtype as a double, grad or not: no copy per step
  }
  return end_step(value);
}

const StepRecord& RunRecorder::end_step(double loss) {
  StepRecord record;
  record.loss = loss;
  return end_step(std::move(record));
}

const StepRecord& RunRecorder::end_step(StepRecord record) {
  // Before the Monitor: its health rules tag each alert with the step's phase.
  record.phase = phase_;
  record.epoch = epoch_;
  record.step_in_phase = step_in_phase_++;
  monitor_->end_step(record);
  if (record.lr == 0.0 && record.optimizer) record.lr = record.optimizer->lr_effective;
  sinks_.on_step(record);
  ++steps_;
  if (record.jit) compiles_ += record.jit->compiles;
  if (record.compiled) compiles_ += record.compiled->compiles;
  alerts_ += static_cast<int64_t>(record.alerts.size());
  last_ = std::move(record);
  return last_;
}

void RunRecorder::start_phase(int phase, const std::string& reason) {
  if (phase <= phase_) {
    throw InputError("start_phase(" + std::to_string(phase) + "): phases count up from " +
                     std::to_string(phase_ + 1));
  }
  note_event(EventKind::kPhaseStart, reason, {{"phase", phase}});
}

void RunRecorder::note_event(EventKind kind, const std::string& reason, nlohmann::json detail) {
  monitor_->note_event(kind, reason, std::move(detail));
  if (kind == EventKind::kPhaseStart) {
    phase_ = monitor_->phase();  // the Monitor's rule: the phase named, else the next
    step_in_phase_ = 0;
  }
}

void RunRecorder::close(const std::string& status) {
  if (closed_) return;
  closed_ = true;
  RunSummary s;
  s.steps = steps_;
  // The run's wall time, as the trainer's summary says it: not the other run's turns.
  s.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() -
                monitor_->turn_wait_s();
  s.compiles = compiles_;
  s.alerts = alerts_;
  s.status = status;
  s.final_loss = last_.loss;
  s.final_head_losses = last_.head_losses;
  sinks_.on_run_end(s);
  monitor_->finish();
}

}  // namespace recompdiag::probes
