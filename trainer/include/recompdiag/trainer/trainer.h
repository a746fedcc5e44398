#pragma once
/// \file
/// The two-phase trainer: the scenario from the Keras report, on LibTorch, in `recompile` or
/// `mutable` mode. Torch-free interface (pimpl), so the CLI and tests that only run it stay light.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_sink.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/trainer/config.h"
#include "recompdiag/trainer/progress.h"

namespace recompdiag::trainer {

/// What a finished run leaves besides its records, for tests and benchmarks.
struct TrainResult {
  RunSummary summary;
  std::vector<float> final_parameters;          ///< All parameters, flattened in model order.
  std::vector<int64_t> adam_step_at_phase_end;  ///< Adam step counter of the first parameter.
  int64_t compiles = 0;
};

/// Runs the configured phases, writing every record to the attached sinks as it happens.
///
/// Construction validates the config, resolves the device (throws InputError for `cuda` where
/// LibTorch sees none), seeds LibTorch's generators, builds data and model. Not thread-safe; uses
/// LibTorch's global generator and thread settings. Neither copyable nor movable.
class TwoPhaseTrainer {
 public:
  explicit TwoPhaseTrainer(TrainConfig config);
  ~TwoPhaseTrainer();
  TwoPhaseTrainer(const TwoPhaseTrainer&) = delete;
  TwoPhaseTrainer& operator=(const TwoPhaseTrainer&) = delete;
  TwoPhaseTrainer(TwoPhaseTrainer&&) = delete;
  TwoPhaseTrainer& operator=(TwoPhaseTrainer&&) = delete;

  /// Attaches a sink (not owned; must outlive run()).
  void add_sink(RecordSink& sink);
  /// Reports every finished epoch to `progress` (not owned; must outlive run()), or to nobody
  /// when null (the default). `trainer::TerminalProgress` prints Keras's line.
  void set_progress(trainer::ProgressSink* progress);
  /// Called before every epoch (before a phase's setup for its first epoch), outside step timing;
  /// the time spent in it is left out of the summary's elapsed time. `recompdiag ab` uses it to
  /// make two data-parallel jobs take turns epoch by epoch, so that a machine getting faster or
  /// slower affects both alike. In a data-parallel run set it on every rank or on none (a rank with nothing to
  /// wait for passes an empty function): the ranks meet in a Gloo barrier before and after it, so
  /// the job takes its turn as one. Without one, a turn channel that RECOMPDIAG_TURNS hands over
  /// (`ab`, turn_channel.h) is waited on there instead, or before every Nth step when it says
  /// `every=N` (a single process): through the Monitor, or with `monitor` off through the trainer
  /// itself; a job's rank 0 holds it, and a job takes its turns at epochs whatever it says.
  void set_epoch_barrier(std::function<void()> barrier);

  /// The header the run will write: mode, devices, versions, config, probe availability.
  const RunHeader& header() const;

  /// Trains all phases. Can be called once. After request_stop() it returns early: the step in
  /// flight completes and is recorded, and the summary's status is "interrupted".
  TrainResult run();

  /// Asks run() to stop after the current step. Async-signal-safe (sets a lock-free atomic
  /// flag) and callable from any thread; StopOnSignals (stop_signals.h) calls it.
  void request_stop() noexcept;

  /// For benchmarks, instead of run(): `steps` more phase-1 steps, with a monitor built from
  /// `monitor` attached for these steps only (its observer is removed again on return) or none
  /// when null, each step's record fed to `sink` when given. Returns each step's time in ms,
  /// monitor and sink work included. Blocks can be interleaved to compare setups in one process.
  std::vector<double> time_steps(int steps, const probes::MonitorOptions* monitor,
                                 RecordSink* sink = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The device `--device` resolves to ("cpu", "cuda:0", ...). Throws InputError when CUDA is asked
/// for and LibTorch sees none.
std::string resolve_device(const std::string& requested);

}  // namespace recompdiag::trainer
