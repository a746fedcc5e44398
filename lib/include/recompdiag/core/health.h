#pragma once
/// \file
/// Health rules: turn what the probes saw at a step into alerts a user can act on.
///
/// Pure and LibTorch-free: `HealthMonitor::evaluate` reads the probe sections of a `StepRecord` (an
/// absent section means that probe was off, and its rules stay silent) plus the events noted so far
/// (compile reasons, phase starts), and returns the alerts of that step. Memory is bounded: the
/// rolling window of step times is a fixed ring buffer allocated at construction.

#include <cstdint>
#include <string>
#include <vector>

#include "recompdiag/core/memory_trend.h"
#include "recompdiag/core/record.h"

namespace recompdiag {

/// Names of the health rules: the `rule` of an `Alert` and what `StepRecord::alerts` holds.
namespace rules {
/// TorchScript compiles, graph-executor plan builds or torch.compile compiles after warm-up.
inline constexpr const char kCompileAfterWarmup[] = "compile_after_warmup";
/// A torch.compile frame that ran compiled code now runs eagerly: dynamo hit its recompile limit
/// (or gave up on the frame), silently, and every later call pays eager speed.
inline constexpr const char kCompiledFallback[] = "compiled_fallback";
/// A torch.compile frame has made half or more of the compiles its recompile limit allows, at a
/// step that recompiled it: the warning before `compiled_fallback`, while the fix still helps.
inline constexpr const char kRecompileBudget[] = "recompile_budget";
/// New dispatcher op signatures, new GPU kernels or module loads after warm-up.
inline constexpr const char kCacheMissAfterWarmup[] = "cache_miss_after_warmup";
/// Ops that ran on the host while the expected device is CUDA (steady state).
inline constexpr const char kHostOps[] = "host_ops";
/// Host<->device copies above the allowance while the expected device is CUDA (steady state).
inline constexpr const char kCrossDeviceCopies[] = "cross_device_copies";
/// Host syncs (item, nonzero, ...) other than the recorder's own, in steady state, on any device:
/// on CUDA each one stalls the device queue; on the host it is a per-step read that the training
/// step does not need.
inline constexpr const char kHostSyncs[] = "host_syncs";
/// Optimizer state on another device or with another dtype than its parameter.
inline constexpr const char kOptimizerStateOffDevice[] = "optimizer_state_off_device";
/// Parameters that have a gradient but no optimizer state after a step.
inline constexpr const char kOptimizerStateMissing[] = "optimizer_state_missing";
/// An optimizer step counter fell: the moments were thrown away (a fresh optimizer).
inline constexpr const char kOptimizerStateReset[] = "optimizer_state_reset";
/// The lr the trainer asked for is not the lr in the optimizer's param groups.
inline constexpr const char kLrNotInEffect[] = "lr_not_in_effect";
/// Parameters, gradients or buffers not on the expected device.
inline constexpr const char kPlacement[] = "placement";
/// Step wall time above `slow_step_factor` times the rolling median of recent steps and beyond
/// their spread, with no other signal at the step, for `slow_step_streak` steps in a row.
inline constexpr const char kSlowStep[] = "slow_step";
/// The graph executor kept profiling for `max_profiling_steps` steps in a row after warm-up: the
/// step never got its optimized plan.
inline constexpr const char kJitNotOptimized[] = "jit_not_optimized";
/// A probe dropped events or CUPTI dropped activity records: counters undercount.
inline constexpr const char kProbeDrops[] = "probe_drops";
/// The process's resident memory grew steadily over the last window of steps (MemoryTrend), not
/// once: something is kept alive step after step (old compiled units, optimizers, tensors).
inline constexpr const char kMemoryGrowth[] = "memory_growth";

/// Every rule above, once: what a consumer that needs the full set iterates (the Prometheus
/// exporter serves each rule's alert counter at 0 from the start). A new rule is added here too.
inline constexpr const char* kAll[] = {kCompileAfterWarmup,
                                       kCacheMissAfterWarmup,
                                       kHostOps,
                                       kCrossDeviceCopies,
                                       kHostSyncs,
                                       kOptimizerStateOffDevice,
                                       kOptimizerStateMissing,
                                       kOptimizerStateReset,
                                       kLrNotInEffect,
                                       kPlacement,
                                       kSlowStep,
                                       kJitNotOptimized,
                                       kProbeDrops,
                                       kMemoryGrowth,
                                       kCompiledFallback,
                                       kRecompileBudget};
}  // namespace rules

/// One alert: which rule fired, at which step, the evidence, and what to do about it.
struct Alert {
  std::string rule;      ///< One of `rules::k*`.
  int64_t step = 0;      ///< Global step of the record that fired it.
  int phase = 1;         ///< Phase of that step.
  std::string evidence;  ///< What was measured, with numbers (and the compile reason if known).
  std::string advice;    ///< What the user can do about it.
  /// What a compile alert is about: the frame and cause of the compile noted last ("forward
  /// (train.py:12): new_size"), or the compile's reason for another compiler; empty for the other
  /// rules. Alerts of one rule and subject are one alert repeated (what a log prints once).
  std::string subject;
};

/// Whether `rule` is about compiles (compile_after_warmup, recompile_budget, compiled_fallback,
/// cache_miss_after_warmup): its alerts carry the subject of the compile noted last.
bool is_compile_rule(const std::string& rule);

/// The subject of a compile event, as Alert::subject names it: for a torch.compile recompile its
/// frame ("forward (train.py:12)") and cause (its key, else the guard's subject); for another
/// compile its reason. Pure.
std::string compile_subject(const EventRecord& compile);

/// The alert as a run-file event: kind kAlert, `reason` = "<rule>: <evidence>", detail holds rule,
/// evidence and advice.
EventRecord to_event(const Alert& alert);

/// Thresholds of the health rules. Defaults suit a steady-state training loop.
struct HealthOptions {
  /// Steps at the start of the run during which compiles, cache misses, host ops, copies, syncs
  /// and slow steps are expected and not alerted.
  int64_t warmup_steps = 10;
  /// Steady-state allowances per step while the expected device is CUDA. The batch is usually
  /// copied host->device every step, hence a non-zero default for h2d copies.
  int64_t max_host_ops = 0;
  int64_t max_copies_h2d = 8;
  int64_t max_copies_d2h = 0;
  int64_t max_syncs = 0;
  /// New dispatcher signatures tolerated per step after warm-up.
  int64_t max_new_signatures = 0;
  /// A step is slow when wall_ms > slow_step_factor * median of the last `rolling_window` steps
  /// and wall_ms > median + slow_step_spread * robust sigma (1.4826 * MAD) of those steps: on a
  /// noisy machine the spread, not the median alone, says what is out of the ordinary.
  double slow_step_factor = 1.5;
  double slow_step_spread = 6.0;
  /// A slow step is reported only when this many steps in a row are slow and none of them carries
  /// a probe signal (JIT work, first-seen signatures, another alert): a lone spike is machine
  /// noise, and a slow step with a signal is reported by that signal's rule.
  int64_t slow_step_streak = 3;
  /// Steps in a row with graph-executor profiling runs, after warm-up, before jit_not_optimized
  /// fires (a healthy executor profiles one or two runs after each compile).
  int64_t max_profiling_steps = 10;
  /// Steps in the rolling median window (the ring buffer's capacity). At least 1.
  int64_t rolling_window = 50;
  /// Steps the window must hold before the slow-step rule may fire.
  int64_t min_window = 10;
  /// When resident memory (the `memory` section) counts as growing steadily; checked from the end
  /// of warm-up, over the latest `memory_growth.window` steps.
  MemoryGrowthOptions memory_growth;
  /// Relative tolerance when comparing the requested and the effective lr (lr_in_effect()).
  double lr_rel_tolerance = kLrRelTolerance;
  /// An alert of one rule is not repeated within this many steps (0: alert at every step). A
  /// compile alert for a compile noted since the last one is always raised.
  int64_t repeat_after_steps = 50;

  /// Throws InputError with one sentence for the first threshold that cannot work: a negative
  /// count or allowance, a slow-step factor below 1, a streak or window below 1, a min_window
  /// beyond the window, a negative or non-finite tolerance, or memory_growth's own.
  /// MonitorOptions::validate() calls it; HealthMonitor clamps what it is given, as before 0.7.
  void validate() const;
};

/// The rule engine. Feed it every step record in order; it returns that step's alerts.
///
/// Not thread-safe: use from the training thread. Owns only fixed-size state (no per-step growth).
class HealthMonitor {
 public:
  /// `expected_device` is a device string ("cpu", "cuda", "cuda:0"); the host-op, copy and sync
  /// rules apply only when it names CUDA.
  explicit HealthMonitor(HealthOptions options = {}, std::string expected_device = "cpu");

  /// Notes an event: kCompile remembers its reason for the next compile alert; others are ignored.
  void note_event(const EventRecord& event);

  /// Evaluates the rules on one step and returns its alerts (possibly none). Also records the
  /// step's wall time in the rolling window (after the slow-step rule has used the window).
  std::vector<Alert> evaluate(const StepRecord& step);

  /// Median of the step times in the window, or 0 when empty.
  double rolling_median() const;
  /// Step times currently in the window.
  int64_t window_size() const { return window_count_; }
  /// Alerts held back because the same rule fired less than `repeat_after_steps` ago.
  int64_t suppressed() const { return suppressed_; }
  const HealthOptions& options() const { return options_; }

 private:
  void raise(std::vector<Alert>& out, const char* rule, const StepRecord& step,
             std::string evidence, const char* advice, bool repeat_ok = false);
  void check_compiled_fallback(std::vector<Alert>& out, const StepRecord& step);
  void check_slow_step(std::vector<Alert>& out, const StepRecord& step, bool steady,
                       bool has_signal);

  HealthOptions options_;
  bool expect_cuda_ = false;
  std::vector<double> window_;           // ring buffer, fixed capacity
  mutable std::vector<double> scratch_;  // preallocated for the median
  int64_t window_count_ = 0;
  int64_t window_next_ = 0;
  std::string last_compile_reason_;
  std::string last_compile_subject_;
  int64_t last_compile_step_ = -1;
  int64_t compile_alerted_for_ = -2;    // last_compile_step_ when a compile alert last fired
  int64_t compiled_regions_seen_ = 0;   // torch.compile regions run before this step
  int64_t eager_fallbacks_before_ = 0;  // eager fallbacks of the previous step
  int64_t slow_streak_ = 0;             // slow steps in a row, none with a probe signal
  int64_t slow_streak_first_ = 0;
  int64_t profiling_streak_ = 0;  // steps in a row with profiling runs
  MemoryTrend memory_trend_;
  std::vector<std::pair<std::string, int64_t>> last_fired_;  // rule -> step, one entry per rule
  int64_t suppressed_ = 0;
};

}  // namespace recompdiag
