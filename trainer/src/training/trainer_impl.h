#pragma once
// The trainer's state and the operations on it, private to the trainer. The work is split by job:
// trainer.cpp holds the run loop, time_steps() and the one function that records a step;
// phase_switch.cpp what happens between steps (compiles, the optimizer's handoff at a phase switch,
// lr changes, the per-epoch fault effects); run_header.cpp the header. Pulls in LibTorch.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_fan_out.h"
#include "recompdiag/core/turn_channel.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/trainer/model.h"
#include "recompdiag/trainer/progress.h"
#include "recompdiag/trainer/trainer.h"
#include "training/data_parallel_group.h"
#include "training/extra_work.h"
#include "training/fault_effects.h"

namespace recompdiag::trainer {

/// Where a step sits in the run: what its record says besides the measurements.
struct StepPosition {
  int64_t step = 0;
  int phase = 1;  ///< 1-based.
  int epoch = 0;
  int64_t step_in_phase = 0;
};

struct TwoPhaseTrainer::Impl {
  TrainConfig config;
  torch::Device device{torch::kCPU};
  RunHeader header;
  RecordFanOut sinks;  // the run file, an exporter, ... (add_sink); the monitor's event sink
  trainer::ProgressSink* progress = nullptr;  // not owned; null: no progress
  bool ran = false;
  std::function<void()> epoch_barrier;
  std::atomic<bool> stop_requested{false};  // request_stop(), from a signal handler
  // A data-parallel rank stops when the job agrees to, after the same step on every rank: the
  // ranks' requests travel with each step's all-reduce (stop_requested alone would let one rank
  // stop while another waits for it in the next all-reduce).
  bool job_stop = false;

  SeqModel model{nullptr};
  std::vector<torch::Tensor> params;
  std::vector<Batch> batches;
  std::unique_ptr<CompiledStep> step;
  std::unique_ptr<torch::optim::Adam> adam;
  torch::Tensor loss_weights;  // mutable mode: the tensor the compiled step reads
  int64_t compiles = 0;
  int64_t bench_step = 0;  // time_steps() only

  /// The seam between backward and clipping: every parameter's gradient is complete and local.
  /// Empty for a single process; data-parallel training averages the gradients (and the losses,
  /// which the record and the plateau rule read) across ranks here, so clipping and the optimizer
  /// step see the same gradients on every rank.
  std::function<void(const std::vector<torch::Tensor>& params, StepLosses& losses)>
      on_gradients_ready;
  /// A data-parallel rank's membership in its job; null for a single process.
  std::unique_ptr<trainer::detail::DataParallelGroup> group;

  std::unique_ptr<probes::Monitor> monitor;  // null with --no-monitor
  /// Turns with another run from RECOMPDIAG_TURNS (`ab --a-cmd/--b-cmd`), taken at every epoch
  /// barrier when no epoch barrier is set: through the monitor when it runs, else through `turns`.
  /// A data-parallel job takes them through rank 0; the other ranks only meet it in the barrier.
  /// Decided once, at construction, so every rank of a job agrees for the whole run.
  bool turns_at_epochs = false;
  /// Steps per turn when the turns come step by step (the channel's `every=N`, a single process):
  /// through the monitor's begin_step when it runs, else before each Nth step through `turns`.
  int64_t turn_every_steps = 0;
  std::unique_ptr<TurnChannel> turns;             // --no-monitor on rank 0 only
  std::unique_ptr<detail::ExtraWork> extra_work;  // the extra-work fault; null when healthy
  // Faults (faults.h): what `leak` keeps alive, and `deopt`'s hold on the profiling count.
  std::vector<std::unique_ptr<CompiledStep>> leaked_steps;
  std::vector<std::unique_ptr<torch::optim::Adam>> leaked_optimizers;
  std::unique_ptr<detail::ProfilingNeverCompletes> deopt;
  double lr_requested = 0.0;  // the lr last asked for: in effect unless lr-trap

  bool has(FaultKind kind) const { return config.faults.has(kind); }
  /// recompile-one-rank: true on the one rank that recompiles where the others do not.
  bool recompiles_alone() const {
    return has(FaultKind::kRecompileOneRank) && group && group->rank() == config.faults.one_rank;
  }

  /// Records an event: through the monitor when it runs (so its rules know compile reasons and
  /// phases), straight to the sinks when it does not.
  void emit(const EventRecord& e);
  /// Picks up RECOMPDIAG_TURNS (after the monitor and the group exist): sets turns_at_epochs.
  void take_turns_from_environment();
  /// Rank 0's (or a single process's) turn at the epoch barrier; a timeout becomes an event.
  void take_turn(int64_t at_step, int phase);

  // trainer.cpp

  /// What run() carries from phase to phase: defined in trainer.cpp.
  struct RunProgress;
  /// Sums of one epoch's steps: defined in trainer.cpp.
  struct EpochTotals;

  /// The turn before step `at_step` when turns come every N steps and no monitor takes them.
  void take_step_turn(int64_t at_step, int phase, RunProgress& run);
  /// Whether to stop between steps: a stop lets the step in flight finish and be recorded.
  bool stopping() const;
  /// Waits at an epoch barrier for this run's turn (when it takes turns); the wait is not
  /// training time.
  void wait_turn(RunProgress& run, int phase);
  /// Runs phase `index` (0-based): its start, then its epochs until done or stopping().
  void run_phase(size_t index, RunProgress& run);
  /// Starts phase `index`: the phase_start event, then the first compile or the switch.
  void begin_phase(size_t index, RunProgress& run);
  /// The steps of one epoch (fewer when stopping()); returns their sums.
  EpochTotals run_epoch(int phase, int epoch, int64_t& step_in_phase, RunProgress& run);
  /// After a whole epoch: the progress line and the plateau rule's lr decision.
  void end_epoch(const PhaseConfig& phase_config, int phase, int epoch, const EpochTotals& totals,
                 RunProgress& run);
  /// The run file's summary of a run that ended (`failed`: its data-parallel job failed).
  RunSummary summarize(const RunProgress& run, const std::vector<float>& final_parameters,
                       bool failed) const;

  /// One optimisation step on batch `b`; writes (loss, cat loss, bin loss) to `host`.
  void train_step(size_t b, const torch::Tensor* weights_arg, float host[3]);
  /// One recorded step, the same for run() and time_steps(): `monitor` (may be null) brackets it,
  /// the step (with the extra-work fault's work) is timed into `rec.wall_ms`, the record is
  /// completed at `at` and handed to every sink. `rec` is reused across steps; on return it holds
  /// this step's record, alerts included.
  void record_step(const StepPosition& at, size_t batch, const torch::Tensor* weights_arg,
                   probes::Monitor* monitor, RecordSink& to, StepRecord& rec);

  // phase_switch.cpp

  /// Compiles the step for `weights` (constants in recompile mode) and records the compile event.
  void compile(const std::vector<double>& weights, int64_t at_step, int phase,
               const std::string& reason);
  /// Makes `rebuilt` the optimizer (the old one is kept alive by `leak`) and tells the monitor.
  void use_optimizer(std::unique_ptr<torch::optim::Adam> rebuilt, double requested_lr);
  /// Sets the lr in place in every param group; with `lr-trap`, on a copy of the options.
  void change_lr(double lr);
  /// Rebuilds Adam, by `handoff`; with `lr-trap` the new lr goes to a copy of the old options.
  void rebuild_optimizer(double lr, OptimizerHandoff handoff, int64_t at_step, int phase);
  /// The switch into phase `index` (0-based, > 0): new loss weights and lr, by the mode's means.
  void switch_phase(size_t index, int64_t at_step);
  /// recompile-storm and leak: before every epoch but a phase's first, the step is compiled
  /// again, as when a value that changes every epoch (the lr) is a compile-time constant; leak
  /// also rebuilds Adam (state migrated) and keeps every old unit and optimizer alive.
  void start_epoch(const PhaseConfig& phase_config, int64_t at_step, int phase, int epoch);
};

/// "%g" of an lr, as events and progress print it.
std::string format_lr(double lr);

}  // namespace recompdiag::trainer
