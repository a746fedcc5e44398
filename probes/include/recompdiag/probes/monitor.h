#pragma once
/// \file
/// The monitor: what any LibTorch trainer links in (CMake target `recompdiag::monitor`) to learn,
/// at every step, how many compiles and cache misses happened, where ops, copies and syncs ran,
/// where the optimizer state lives, and which health rules fired.
///
/// \code
///   recompdiag::probes::MonitorOptions options;
///   options.expected_device = "cuda";
///   recompdiag::probes::Monitor monitor(*model, optimizer, options);
///   monitor.watch(compiled_unit);  // each torch::jit::compile result
///   for (int64_t step = 0; step < steps; ++step) {
///     recompdiag::StepRecord record;
///     {
///       recompdiag::probes::StepGuard guard(monitor, record, step);  // begin_step ... end_step
///       // forward, backward, optimizer.step(), read the loss
///     }
///     // record.dispatch, jit, optimizer, placement, cupti and record.alerts are filled
///   }
/// \endcode

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/health.h"
#include "recompdiag/core/record.h"
#include "recompdiag/core/record_sink.h"
#include "recompdiag/core/turn_channel.h"
#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn
namespace torch::optim {
class Optimizer;
}  // namespace torch::optim
namespace torch::jit {
struct CompilationUnit;
}  // namespace torch::jit

namespace recompdiag {
class PlantedSlowdown;
}  // namespace recompdiag

namespace recompdiag::probes {

namespace detail {
class AlertLog;
}  // namespace detail
class CommProbe;
class CompiledProbe;
class DispatchStepProbe;
class JitProbe;
class OptimizerStateProbe;
class PlacementStepProbe;
class StepProbe;
struct TrainingStateSource;  // training_state.h

/// Configuration of a Monitor. Plain data; copy freely.
struct MonitorOptions {
  /// Device the model is meant to train on: "cpu", "cuda", "cuda:1". Throws InputError at
  /// construction when it is not a torch device string.
  std::string expected_device = "cpu";
  /// Probes to run. A probe that is on but cannot run reports why in probe_availability().
  bool dispatcher = true;
  bool jit = true;
  bool optimizer = true;
  bool placement = true;
  bool cupti = true;
  /// The collectives probe (`comm` section): on for a rank of a data-parallel job, whose
  /// collective layer reports each collective through Monitor::comm(). Off by default: a single
  /// process has no collectives, and its steps carry no `comm` section.
  bool comm = false;
  /// The process's resident memory (section `memory`) and, on CUDA, the caching allocator's bytes
  /// (section `cuda_memory`), read at every step end.
  bool memory = true;
  /// The torch.compile probe (section `compiled`, compiled_probe.h): dynamo's cache lookups,
  /// compiled-region runs, compiles and eager fallbacks per step. Off by default: only Python
  /// loops run torch.compile (the Python package turns it on), and its RecordFunction callback
  /// would cost every C++ op a test.
  bool compiled = false;
  /// NVTX ranges for run, phase and step (free without a tool attached).
  bool nvtx = true;
  /// Observe ops every Nth step only (1: every step). Unsampled steps cost nothing. The default is
  /// kDefaultDispatcherSampleEvery (dispatch_hook.h); before 0.7 it was 1.
  int64_t dispatcher_sample_every = kDefaultDispatcherSampleEvery;
  /// On the steps sampling skips, still count ops and host syncs by op name, without reading op
  /// inputs: every step observed. Costs most of what reading inputs costs (LibTorch's per-op
  /// RecordFunction work dominates), so it is off by default. See
  /// DispatcherOptions::count_unsampled.
  bool dispatcher_count_unsampled = false;
  /// How the dispatcher probe sees ops: a RecordFunction callback, or a dispatcher fallback on a
  /// mode key, which costs an observed step less and sees only the training thread's ops and its
  /// backward's. The default, kAuto (0.9; before, the callback), is the mode key unless `compiled`
  /// is on (torch.compile's guards check the dispatch keys the mode key changes) or another
  /// library holds its keys. See DispatchHook; dispatcher_hook() says which one a Monitor uses.
  DispatchHook dispatcher_hook = kDefaultDispatchHook;
  /// With sampling, every step is still observed for this many steps at the start and after
  /// each compile, phase start or optimizer rebuild: where cache misses and host ops appear.
  int64_t dispatcher_full_steps_after_event = 20;
  /// Hash first-seen op signatures (the dispatcher cache-miss count).
  bool op_signatures = true;
  CuptiOptions cupti_options;
  /// Thresholds of the health rules.
  HealthOptions health;
  /// Called on the training thread for every alert, inside end_step. Must not throw.
  std::function<void(const Alert&)> on_alert;
  /// Writes alert lines to stderr: the first alert of each rule and subject (Alert::subject)
  /// whole ("recompdiag alert [rule] step N: evidence. advice"), and at finish() one line per
  /// rule and subject that repeated, with its count. Off, too, when the environment says
  /// RECOMPDIAG_QUIET_ALERTS=1 (`recompdiag ab --quiet` sets it for its sides). The run file keeps every alert either way.
  bool log_alerts = true;
  /// Non-owning; when set, noted events and alert events go to `event_sink->on_event` as they
  /// happen instead of the take_events() queue. Must outlive the Monitor.
  RecordSink* event_sink = nullptr;
  /// Capacity of the take_events() queue; events beyond it are dropped and counted.
  int64_t max_queued_events = 4096;
  /// Takes turns with another run when the environment hands this process a turn channel
  /// (RECOMPDIAG_TURNS, turn_channel.h; `recompdiag ab` sets it): every N steps in begin_step when
  /// the channel says `every=N` (then take_turn() returns at once: the steps are the turns), else
  /// at take_turn(). Off: the variable is not read.
  bool take_turns = true;
  /// Whether a channel's `every=N` may set the turns. Off: turns only at take_turn(), whatever the
  /// channel says (a data-parallel job's rank 0, whose job takes its turns as one at epoch
  /// boundaries).
  bool step_turns = true;

  /// Throws InputError with one sentence for the first option that cannot work: an expected
  /// device that is not a torch device string, dispatcher_sample_every below 1, a negative
  /// dispatcher_full_steps_after_event or max_queued_events, health thresholds that
  /// HealthOptions::validate() refuses, CUPTI buffer counts below 1, and the mode-key hook with the
  /// torch.compile probe (torch.compile's guards check the dispatch keys the mode key changes:
  /// the tool would cause the recompiles it is there to find). The Monitor calls it first; so do
  /// the bindings, before they create anything.
  void validate() const;
};

/// Watches one training loop: its model, its optimizer and the steps it marks.
///
/// Not thread-safe: call every method from the training thread (the probes' callbacks on other
/// threads write only preallocated atomics). Holds non-owning references to the model and the
/// optimizer: they must outlive the Monitor or be replaced (set_model, set_optimizer). Owns the
/// process's dispatcher probe (a second Monitor alive at the same time reports its dispatcher
/// probe unavailable), and removes its RecordFunction callback, or its mode key from the calling
/// thread, on destruction. Memory is bounded: fixed tables, a fixed ring buffer of step times, a
/// capped event queue.
class Monitor {
 public:
  /// Throws InputError when `options.validate()` does, or when
  /// RECOMPDIAG_TURNS is set but malformed (MonitorOptions::take_turns), or RECOMPDIAG_PLANT_SLOWDOWN. Probes that cannot run
  /// (no GPU for CUPTI, ...) do not throw: see probe_availability().
  Monitor(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
          MonitorOptions options = {});
  /// A Monitor of a model and optimizer that LibTorch does not hold: `source` hands their tensors
  /// over at each step end. Throws as the constructor above.
  explicit Monitor(TrainingStateSource source, MonitorOptions options = {});
  /// finish(), if not called yet.
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  Monitor(Monitor&&) = delete;
  Monitor& operator=(Monitor&&) = delete;

  /// Inspects another model from the next step on.
  void set_model(torch::nn::Module& model);
  /// Inspects another optimizer from the next step on (e.g. rebuilt in recompile mode). Step
  /// counters are compared across the change: a fresh optimizer is reported as a state reset.
  void set_optimizer(torch::optim::Optimizer& optimizer);
  /// The lr the trainer means to be in effect; checked against every param group at each step
  /// (catches assigning lr to a copy of the options). 0 disables the check (the default).
  void set_requested_lr(double lr);
  /// Watches a TorchScript compilation unit: counts as one compile at the current (or next) step,
  /// and its functions' executors are followed. Call once per torch::jit::compile result.
  void watch(const std::shared_ptr<torch::jit::CompilationUnit>& unit);

  /// Notes an event at the current step: kCompile (its reason goes into compile alerts),
  /// kPhaseStart (detail {"phase": n} sets the phase, else the next one; starts an NVTX phase
  /// range), or any other.
  /// The event is queued for take_events() or sent to MonitorOptions::event_sink.
  void note_event(EventKind kind, std::string reason,
                  nlohmann::json detail = nlohmann::json::object());

  /// Observes every step fully for the next `dispatcher_full_steps_after_event` steps, as a compile
  /// event does, and the torch.compile probe the rest of the current step: called when something
  /// starts compiling mid-step (dynamo's compile callback).
  void observe_from_now();
  /// Waits for this run's turn when the Monitor holds a turn channel (MonitorOptions::take_turns);
  /// returns at once when it holds none, when the peer is gone, or after a timeout. Call between
  /// steps, outside your step timing: at your epoch boundaries (the first call before the first
  /// epoch). A wait that times out ends turns for the run and is noted as an event
  /// (TurnChannel::timeout_event()). Returns at once when begin_step takes the turns
  /// (turn_every_steps() > 0); else, once called, begin_step no longer takes turns.
  void take_turn();
  /// Whether a turn channel is held and still takes turns.
  bool takes_turns() const { return turns_ && turns_->taking_turns(); }
  /// Steps per turn when begin_step takes the turns (the channel's `every=N`, with
  /// MonitorOptions::step_turns); 0 when turns come at take_turn() or not at all. What the run
  /// header's turn_every_steps records.
  int64_t turn_every_steps() const {
    return turns_ && options_.step_turns && !explicit_turns_ ? turns_->spec().every_steps : 0;
  }
  /// The phase the last kPhaseStart set (1 before any): what the health rules tag alerts with.
  int phase() const { return phase_; }
  /// Seconds spent waiting for turns so far (the other run's steps, not this run's training).
  double turn_wait_s() const { return turn_wait_s_; }

  /// Runs this step's planted slowdown (RECOMPDIAG_PLANT_SLOWDOWN=PCT in the environment:
  /// `recompdiag calibrate`), once a step, inside its timing: end_step calls it first; a loop that
  /// times its steps itself (the Python Monitor) calls it before it reads its clock. Does nothing
  /// without the variable or outside a step.
  void planted_work();
  /// The planted slowdown's percentage; 0 for none. What the run header's planted_slowdown_pct
  /// records.
  double planted_slowdown_pct() const;

  /// Ends the run for the alert lines: one line per alert that repeated since its first line,
  /// with its count (MonitorOptions::log_alerts). Once; RunRecorder::close() calls it.
  void finish();

  /// Marks the start of a step. `step` is the global step; -1 continues from the previous one.
  /// With a turn channel that says `every=N` (turn_every_steps()), every Nth step
  /// (from the first) waits for its turn first, before the step's clock starts: start your own
  /// step clock after begin_step.
  void begin_step(int64_t step = -1);
  /// Marks the end of the step: sets record.step to the step begin_step marked (record.phase is
  /// the trainer's and is left alone), fills record.dispatch, jit, optimizer, placement, cupti
  /// (each only when that probe ran), record.wall_ms when it is 0 (host clock since begin_step),
  /// evaluates the health rules, appends fired rule names to record.alerts, and reports each alert
  /// (callback, stderr, event). Call after optimizer.step() and after reading the loss.
  void end_step(StepRecord& record);

  /// Events noted or raised since the last call, oldest first (empty with an event_sink).
  std::vector<EventRecord> take_events();
  /// Events the queue had no room for.
  int64_t events_dropped() const { return events_dropped_; }

  /// Probe name -> {"available": bool, "reason": string}, for RunHeader::probes.
  nlohmann::json probe_availability() const;
  /// The CUPTI probe's availability, for RunHeader::cupti.
  Availability cupti_availability() const;
  /// The hook the dispatcher probe observes through, kRecordFunction or kModeKey
  /// (MonitorOptions::dispatcher_hook resolved); std::nullopt when the probe is off or cannot run.
  std::optional<DispatchHook> dispatcher_hook() const;
  /// What the Monitor tells a run header: RunHeader::probes and ::cupti, and
  /// `"dispatch_hook": "mode-key"` in its config when the dispatcher probe observes through the
  /// mode key. RunRecorder and the trainer call it on the header they write.
  void describe(RunHeader& header) const;
  /// The alerts of the last end_step.
  const std::vector<Alert>& last_alerts() const { return last_alerts_; }
  const HealthMonitor& health() const { return health_; }
  const MonitorOptions& options() const { return options_; }
  /// The collectives probe, to report each collective of the step to; nullptr unless
  /// MonitorOptions::comm is on.
  CommProbe* comm() { return comm_; }
  /// The torch.compile probe, to add compile time to; nullptr unless MonitorOptions::compiled is
  /// on and the probe runs.
  CompiledProbe* compiled() { return compiled_; }
  /// The step begin_step marked last (or will mark next when between steps).
  int64_t current_step() const { return step_; }

 private:
  Monitor(torch::nn::Module* model, torch::optim::Optimizer* optimizer, TrainingStateSource source,
          MonitorOptions options);
  void emit(EventRecord event);
  void wait_for_turn();

  MonitorOptions options_;
  // Every probe, one per section, disabled ones as null objects. end_step runs them in order (the
  // dispatcher first), begin_step in reverse (the dispatcher last).
  std::vector<std::unique_ptr<StepProbe>> probes_;
  const DispatchStepProbe* dispatch_ = nullptr;  // in probes_, for dispatcher_hook()
  JitProbe* jit_ = nullptr;                      // in probes_, for watch(); null when off
  OptimizerStateProbe* optimizer_ = nullptr;     // in probes_, for set_optimizer()
  PlacementStepProbe* placement_ = nullptr;      // in probes_, for set_model()
  CommProbe* comm_ = nullptr;                    // in probes_, for comm(); null when off
  CompiledProbe* compiled_ = nullptr;            // in probes_, for compiled(); null when off
  HealthMonitor health_;
  std::vector<EventRecord> events_;
  int64_t events_dropped_ = 0;
  std::vector<Alert> last_alerts_;
  std::unique_ptr<detail::AlertLog> alert_log_;  // null: no alert lines
  std::unique_ptr<PlantedSlowdown> planted_;     // null: none planted
  bool planted_done_ = false;                    // this step's work ran
  int64_t step_ = 0;
  int64_t observe_all_until_ = 0;  // dispatcher: every step before this one is observed
  bool seen_step_ = false;
  int phase_ = 1;
  bool in_step_ = false;
  bool phase_range_open_ = false;
  std::chrono::steady_clock::time_point step_start_;
  std::unique_ptr<TurnChannel> turns_;  // null without RECOMPDIAG_TURNS
  bool explicit_turns_ = false;         // take_turn() was called: begin_step leaves turns alone
  int64_t steps_begun_ = 0;
  double turn_wait_s_ = 0.0;  // begin_step calls, for `every=N` turns
};

/// Marks one step for its scope: begin_step on construction, end_step(record) on destruction. The
/// destructor does not throw: an exception from end_step is swallowed after the record is left as
/// filled so far. Use begin_step/end_step directly to see such errors.
class StepGuard {
 public:
  StepGuard(Monitor& monitor, StepRecord& record, int64_t step = -1)
      : monitor_(monitor), record_(record) {
    monitor_.begin_step(step);
  }
  ~StepGuard() {
    try {
      monitor_.end_step(record_);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }
  StepGuard(const StepGuard&) = delete;
  StepGuard& operator=(const StepGuard&) = delete;
  StepGuard(StepGuard&&) = delete;
  StepGuard& operator=(StepGuard&&) = delete;

 private:
  Monitor& monitor_;
  StepRecord& record_;
};

}  // namespace recompdiag::probes
