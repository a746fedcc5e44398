#pragma once
/// \file
/// A Monitor that writes its run file: what a LibTorch trainer links to be compared by
/// `recompdiag compare` and gated by `recompdiag ab --a-cmd ... --b-cmd ...` with no more calls
/// than marking its steps.
///
/// \code
///   recompdiag::probes::RunRecorderOptions run;
///   run.out = "run.jsonl";
///   recompdiag::probes::RunRecorder recorder(*model, optimizer, run);
///   for (int64_t step = 0; step < steps; ++step) {
///     recorder.begin_step();  // under `recompdiag ab`: waits for this run's turn
///     // forward, backward, optimizer.step()
///     recorder.end_step(loss);  // the step's line, with every probe's section
///   }
///   // the summary line is written when the recorder is closed or destroyed
/// \endcode

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_fan_out.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/probes/training_state.h"

namespace recompdiag::probes {

/// A run header with what this process knows of itself: the tool's and LibTorch's versions, the
/// host and the start time (UTC, ISO 8601). The rest is the writer's.
RunHeader run_header_here();

/// How a Monitor's steps are timed on `device` (the header's `step_timing`): the host's steady
/// clock around the step, which on CUDA ends after the loss read that synchronises with the
/// device. The one wording of every writer (the trainer, RunRecorder, the Python Monitor).
std::string step_timing_for(const std::string& device);

/// Configuration of a RunRecorder. Plain data.
struct RunRecorderOptions {
  /// The run file to write (JSON Lines, truncated). Required unless `sinks` take the records.
  std::string out;
  /// The run's label in reports ("baseline", "recompile", ...): the header's `mode`.
  std::string mode = "run";
  /// The optimizer's name for reports ("Adam"); empty when not said.
  std::string optimizer;
  /// Your configuration: `compare` lists the keys whose values differ between A and B.
  nlohmann::json config = nlohmann::json::object();
  uint64_t seed = 0;
  /// The Monitor's options; its event_sink is the recorder's.
  MonitorOptions monitor;
  /// Header fields you state yourself, by their run-file names, over those above and the
  /// recorder's own: {"rank": 1, "world_size": 2, "job_id": "..."} for a rank of a data-parallel
  /// job (`compare` reads its rank files as one job), the Python Monitor's torch version and the
  /// probes it runs itself. Read by the run-file parser, its checks included; `probes` entries
  /// are added to the Monitor's.
  nlohmann::json header = nlohmann::json::object();
  /// Further sinks that get every record the run file gets (a metrics exporter). Not owned: they
  /// must outlive the recorder.
  std::vector<RecordSink*> sinks;
  /// Whether destruction writes the summary when close() did not ("completed", or "failed" while
  /// an exception unwinds the loop). Off, a recorder destroyed unclosed leaves its run file
  /// without a summary, which reports read as a run that did not finish: what the Python Monitor
  /// does, whose exceptions do not unwind C++.
  bool close_on_destruction = true;

  /// Throws InputError for neither a run file nor a sink, a header or config that is not a JSON
  /// object, or what `monitor.validate()` refuses. Every constructor calls it before anything is
  /// opened.
  void validate() const;
};

/// Watches one training loop with a Monitor and writes its run file: the header at construction
/// (with the probes' availability and how the run takes turns under `recompdiag ab`), one line
/// per step at end_step, every event as it happens, and the summary at close() or destruction.
/// Every line is written as it is produced, so a run killed at any moment keeps what it did.
/// The one writer of a monitored run: the Python Monitor records through it too.
///
/// Not thread-safe, as the Monitor. Holds non-owning references to the model and the optimizer.
class RunRecorder {
 public:
  /// Throws InputError when `options.out` is empty (and no sink takes the records) or cannot be
  /// written, when `options.header` is not a valid header, or as Monitor's constructor does.
  RunRecorder(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
              RunRecorderOptions options);
  /// A recorder of a model and optimizer that LibTorch does not hold (a Python loop's): `source`
  /// hands their tensors over at each step end (Monitor's constructor of a source). Throws as the
  /// constructor above.
  RunRecorder(TrainingStateSource source, RunRecorderOptions options);
  /// Writes the summary unless close() did (or RunRecorderOptions::close_on_destruction is off):
  /// status "completed", or "failed" when an exception unwinds the loop past the recorder. Never
  /// throws.
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  /// The Monitor, for what the recorder does not forward (watch(), set_optimizer(), ...).
  Monitor& monitor() { return *monitor_; }
  const Monitor& monitor() const { return *monitor_; }

  /// Marks the start of a step (Monitor::begin_step: under `recompdiag ab`, waits for the turn).
  void begin_step(int64_t step = -1) { monitor_->begin_step(step); }
  /// Ends the step and writes its line: `loss`, read here as the recorder's own host sync (not
  /// counted against the step), the probes' sections, and the phase, epoch and step in phase the
  /// recorder keeps. Returns the record written (its alerts included).
  const StepRecord& end_step(const at::Tensor& loss);
  /// The same with a loss already read (a read in the step counts as one of its host syncs).
  const StepRecord& end_step(double loss);
  /// The same for a record you filled (head_losses, loss_weights, device_ms, ...); `record.phase`,
  /// `epoch` and `step_in_phase` are the recorder's.
  const StepRecord& end_step(StepRecord record);

  /// Starts phase `phase` (from 2) at the next step: a phase_start event with `reason`. A
  /// comparison tests each phase apart, and prices what a switch costs.
  void start_phase(int phase, const std::string& reason = "");
  /// Notes an event at the current step (Monitor::note_event). A kPhaseStart starts the phase its
  /// detail's "phase" names, else the next one, as the Monitor does; unlike start_phase() it does
  /// not check that phases count up.
  void note_event(EventKind kind, const std::string& reason,
                  nlohmann::json detail = nlohmann::json::object());
  /// The epoch of the steps from now on (0 until set): with `ab --turn-every 0`, the turns.
  void set_epoch(int epoch) { epoch_ = epoch; }

  /// The header written at construction.
  const RunHeader& header() const { return header_; }

  /// Writes the summary with `status` ("completed", "interrupted", "failed") once: its steps,
  /// compiles and alerts, and its wall time since construction less the waits for turns.
  void close(const std::string& status = "completed");

 private:
  RunRecorder(RunRecorderOptions options,
              const std::function<std::unique_ptr<Monitor>(MonitorOptions)>& make_monitor);

  std::optional<RunFileSink> file_;
  RecordFanOut sinks_;  // the run file, then options.sinks
  std::unique_ptr<Monitor> monitor_;
  RunHeader header_;
  std::chrono::steady_clock::time_point start_;
  StepRecord last_;
  int phase_ = 1;
  int epoch_ = 0;
  int64_t step_in_phase_ = 0;
  int64_t steps_ = 0;
  int64_t compiles_ = 0;  // every compiler's, for the summary
  int64_t alerts_ = 0;
  bool closed_ = false;
  bool close_on_destruction_ = true;
};

}  // namespace recompdiag::probes
