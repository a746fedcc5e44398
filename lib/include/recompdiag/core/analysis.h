#pragma once
/// \file
/// Analysis of one run: per-phase step-time statistics with warm-up excluded, the cost of each
/// phase switch, probe counts per phase and around each switch, slow stretches with the probe
/// signals that coincide with them, and the training outcome.
///
/// analyze_run() is a pure function of a run (ColumnarRun, or a RunFile): it returns plain structs
/// that renderers format.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/compile_findings.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/core/record.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

/// Settings of analyze_run(); the defaults suit CPU and GPU step times alike.
struct AnalysisOptions {
  /// Warm-up ends at the first step at steady state after which at most one of the next
  /// `warmup_window` steps is above the steady threshold.
  int64_t warmup_window = 5;
  /// A step is at steady state when at most (1 + tolerance) x the phase's reference median, or
  /// within 3 robust sigmas of it, whichever is wider.
  double warmup_tolerance = 0.10;
  /// Warm-up never takes more than this fraction of a phase.
  double max_warmup_fraction = 0.5;
  /// A step slower than `slow_factor` x its phase's steady median is part of a slow stretch, and
  /// so is every warm-up step (the recovery after a switch is one stretch with its causes).
  double slow_factor = 1.5;
  /// Slow steps separated by at most this many other steps of the same phase form one stretch.
  int64_t stretch_gap = 1;
  /// Slow stretches kept, the costliest first (all are counted).
  size_t max_slow_stretches = 20;
  /// Steps before a phase switch counted as "around the switch".
  int64_t switch_window_before = 2;
  /// Steps after the switch counted as around it, at least (the recovery is always included).
  int64_t switch_window_after = 10;
  /// Steps averaged on each side of a switch for the loss jump.
  int64_t loss_window = 3;
  /// Most points per chart series; longer runs are bucketed.
  size_t chart_points = 1200;

  /// Throws InputError naming the field for the first value out of range: windows, the loss
  /// window and chart points of at least 1, a negative tolerance, gap or switch window, a warm-up
  /// fraction outside [0, 1], a slow factor below 1. analyze_run() and CompareOptions::validate()
  /// call it.
  void validate() const;
};

/// Step-time statistics of a set of steps, in milliseconds.
struct StepTimeSummary {
  int64_t n = 0;
  double median_ms = 0.0;
  double p95_ms = 0.0;
  double mad_ms = 0.0;  ///< Median absolute deviation, unscaled.
  double mean_ms = 0.0;
  double stddev_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double total_s = 0.0;
};

/// One phase of one run.
struct PhaseAnalysis {
  int phase = 1;
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t warmup_steps = 0;     ///< Leading steps excluded from the steady state.
  double warmup_extra_s = 0.0;  ///< Time the warm-up spent over the steady median.
  StepTimeSummary all;          ///< Every step of the phase.
  StepTimeSummary steady;       ///< Warm-up excluded.
  ProbeCounts counts;           ///< Every step of the phase.
  ProbeCounts steady_counts;    ///< Warm-up excluded: the baseline rate of each signal.
  double final_loss = 0.0;      ///< Loss of the phase's last step.
  std::vector<double> final_head_losses;
  /// Median of the second half of the steady state over the first half's: far from 1, the
  /// steady state drifted (a busy machine, thermal throttling), and a comparison is suspect.
  double drift_ratio = 1.0;
  /// Steady-state step times, sorted ascending; what compare_runs() tests. Not for display.
  std::vector<double> steady_sorted_ms;
};

/// Losses on both sides of a phase switch (means over AnalysisOptions::loss_window steps).
struct LossJump {
  double total_before = 0.0;
  double total_after = 0.0;
  std::vector<double> head_before;  ///< Unweighted per head.
  std::vector<double> head_after;
  std::vector<double> head_jump;  ///< after - before, per head.
};

/// The cost of one phase switch: the "recompile tax".
struct SwitchCost {
  int from_phase = 1;
  int to_phase = 2;
  int64_t switch_step = 0;  ///< First step of the new phase.
  double extra_s = 0.0;     ///< Time over the new phase's steady median until recovery.
  /// Compile time the run's compile events at the switch report (detail.compile_ms): spent
  /// between steps, so not in any step's wall time.
  double compile_s = 0.0;
  double tax_s = 0.0;             ///< The whole recompile tax: extra_s + compile_s.
  int64_t recovery_steps = 0;     ///< Steps until back at steady state (the phase's warm-up).
  /// What noise alone adds over the steady median in `recovery_steps` steps: the 2.5% and 97.5%
  /// quantiles of that sum over every such window of the phase's steady steps (0 and 0 with
  /// fewer than 20 windows). extra_s stands out of the noise when it is above noise_high_s.
  double noise_low_s = 0.0;
  double noise_high_s = 0.0;
  /// Something was counted at the switch: a compile, plan builds, module loads, first-seen
  /// kernels, or an optimizer reset.
  bool signal = false;
  /// No signal and extra_s within noise_high_s: the slow steps after the switch are what the
  /// machine's noise adds, not the switch's cost. tax_s is then the compile time alone and
  /// recovery_steps 0; extra_s keeps what was measured.
  bool noise_explained = false;
  double first_step_ms = 0.0;     ///< Wall time of the first step after the switch.
  double first_step_ratio = 0.0;  ///< first_step_ms over the new phase's steady median.
  ProbeCounts around;             ///< Counts in the window around the switch.
  LossJump loss;
};

/// A compile event from the run file.
struct CompileEvent {
  int64_t step = 0;
  int phase = 1;
  std::string reason;
};

/// An alert raised during the run (from a step's alert list or an alert event).
struct AlertInstance {
  int64_t step = 0;
  int phase = 1;
  std::string rule;
  std::string message;  ///< Empty for alerts known only by rule name.
};

/// The alerts of one rule over a run: how often, where, and the first one's message.
struct AlertGroup {
  std::string rule;
  int64_t count = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  std::string message;  ///< The first alert's message that has one; empty when none has.
};

/// `alerts` (in step order) grouped by rule, in the order each rule first fired. Pure.
std::vector<AlertGroup> group_alerts(const std::vector<AlertInstance>& alerts);

/// One probe signal coinciding with a slow stretch: its kind, how many, and what its words name
/// beyond the count (reports::signal_words() words it). A field that its kind does not use is
/// left empty or zero.
struct Signal {
  /// Stable key: a `CountSignal::kind` of kProbeCounts ("jit_compiles", "optimizer_reset", ...),
  /// or "context" for an event that gives context (`event`, `phase`).
  std::string kind;
  int64_t count = 0;
  double score = 0.0;  ///< Rank key: count x a prior cost weight of the signal kind.
  /// Compiles: the distinct reasons their compile events noted, in order. An optimizer reset
  /// known only from the trainer's rebuild event (the probe saw none): that event's reason.
  std::vector<std::string> reasons;
  /// Copies: the bytes copied beyond the steady rate. Memory growth: resident memory's growth
  /// over the stretch (negative when it shrank).
  int64_t bytes = 0;
  int64_t steps = 0;          ///< Memory growth: the steps it grew over.
  double lr_requested = 0.0;  ///< The lr signal: requested, and in effect.
  double lr_effective = 0.0;
  std::string optimizer;  ///< An optimizer reset: the optimizer's name ("Adam", or "optimizer").
  /// Context: the event (a phase start, an lr or loss-weight change) and its phase.
  EventKind event = EventKind::kNote;
  int phase = 0;
};

/// A stretch of consecutive slow steps and what coincides with it.
struct SlowStretch {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int phase = 1;
  double mean_ratio = 0.0;  ///< Mean step time over the stretch / the phase's steady median.
  double max_ratio = 0.0;
  double extra_s = 0.0;         ///< Time over the steady median.
  std::vector<Signal> signals;  ///< Ranked, strongest first.
};

/// How training ended.
struct TrainingOutcome {
  bool finished = false;  ///< The run file has a summary line, not marked failed.
  double final_loss = 0.0;
  std::vector<double> final_head_losses;
  /// Some step recorded a loss: a loss other than 0, or head losses. A loop that passes no loss
  /// to its recorder writes 0 at every step, which is no loss at all.
  bool loss_recorded = false;
};

/// One point of the per-step charts; a bucket of consecutive steps for long runs.
struct ChartBucket {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int phase = 1;
  bool warmup = false;  ///< Any step of the bucket is in a warm-up.
  double wall_min_ms = 0.0;
  double wall_mean_ms = 0.0;
  double wall_max_ms = 0.0;
  int64_t compiles = 0;             ///< JIT compiles and compile events.
  int64_t cache_misses = 0;         ///< See ProbeCounts::cache_misses().
  std::vector<double> head_losses;  ///< Mean per head.
};

/// Everything analyze_run() finds in one run.
struct RunAnalysis {
  std::string path;
  RunHeader header;
  std::optional<RunSummary> summary;
  int64_t steps = 0;
  double total_wall_s = 0.0;
  std::vector<PhaseAnalysis> phases;  ///< In phase order.
  std::vector<SwitchCost> switches;   ///< One per phase after the first.
  std::vector<CompileEvent> compiles;
  std::vector<AlertInstance> alerts;
  int64_t slow_stretch_count = 0;           ///< All stretches found.
  std::vector<SlowStretch> slow_stretches;  ///< The costliest, in step order.
  TrainingOutcome outcome;
  std::vector<ChartBucket> chart;
  std::vector<std::string> warnings;  ///< Skipped lines, an unfinished run, ...
  /// torch.compile's findings: frames that recompiled with their guards and causes, the eager
  /// cliff, graph breaks, caches; and the other compilers' compiles by reason.
  CompileFindings compile;
  /// The alerts grouped by rule (group_alerts() of `alerts`).
  std::vector<AlertGroup> alert_groups;
};

/// Analyzes one run. Never throws for a valid run and valid options (throws InputError when
/// `options.validate()` does); a run without steps gives empty phases.
RunAnalysis analyze_run(const ColumnarRun& run, const AnalysisOptions& options = {});
/// The same of a RunFile (its steps are put in columns first).
RunAnalysis analyze_run(const RunFile& run, const AnalysisOptions& options = {});

/// The signals by which phase `b` differs from the same phase of a baseline run `a` (null: no
/// baseline), ranked strongest first with the weights slow stretches use: what a verdict on the
/// phase names as its cause. Counters are compared at B's step count, so a longer phase does not
/// make a signal. Deterministic in the counts: no timing enters.
std::vector<Signal> rank_phase_signals(const PhaseAnalysis& b, const PhaseAnalysis* a,
                                       const std::string& optimizer = "optimizer");

/// How busy the GPU was in a phase's steady state: its kernels' time over its steps' wall time
/// (CUPTI's `kernel_ms` summed over the steady steps that have a `cupti` section, over those
/// steps' wall time). nullopt where no steady step has CUPTI's records (no GPU, or no CUPTI).
std::optional<double> gpu_busy(const PhaseAnalysis& phase);

/// Index of `phase` in analysis.phases, or nullopt.
std::optional<size_t> find_phase(const RunAnalysis& analysis, int phase);

}  // namespace recompdiag
