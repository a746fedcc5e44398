#pragma once
/// \file
/// A/B comparison of runs: per phase, B / A of steady-state step times with an interval and
/// tests that respect what is replicated, the deterministic counts compared exactly, and a
/// verdict a CI can gate on.
///
/// A is the baseline; ratios are B / A, so a ratio above 1 means B is slower. With two or more
/// runs on a side, the run is the unit of replication (each run's steady median is one
/// observation, Welch's t on their logs). With one run per side, a block bootstrap resamples
/// blocks of consecutive steps. Each phase is also tested whole (every step, warm-up and compiles
/// included: across runs, or across epochs of one run), so that a cost sitting in a few slow steps
/// is seen. Phases are judged together: Holm's adjustment over all these p-values, and "no change" only where two one-sided tests (TOST) prove the change smaller than
/// the threshold; what is neither is `inconclusive`, with the runs per side that would settle it.
///
///     std::vector<RunFile> a = {read_run_file("a1.jsonl"), read_run_file("a2.jsonl")};
///     std::vector<RunFile> b = {read_run_file("b1.jsonl"), read_run_file("b2.jsonl")};
///     Comparison c = compare_run_sets(a, b);
///     int exit_code = exit_code_for(c, /*strict_inconclusive=*/false);

#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/convergence.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/core/straggler.h"

namespace recompdiag {

/// Settings of compare_runs().
struct CompareOptions {
  /// Noise threshold: a phase changes only when its ratio is beyond 1 +/- threshold, and "no
  /// change" means proven within it.
  double threshold = 0.05;
  /// Family-wise significance level of the phase tests (Holm over the phases).
  double alpha = 0.05;
  /// Power at which each phase's minimum detectable effect is reported.
  double power = 0.80;
  /// With one run per side that did not take turns, the run-to-run spread of a steady median
  /// (a fraction, the standard deviation of its log) that no within-run resampling can see,
  /// added to the block bootstrap's error for each side. Never assumed: measure it
  /// (`recompdiag bench noise` writes a noise profile, read_noise_profile()) or give several runs
  /// per side. Unset, one independent run per side gives no time verdict (`inconclusive`, saying
  /// what would settle it); counts and their counted cost still decide. Unused with two or more
  /// runs on a side (the spread is measured) and when the runs took turns (`turns`).
  std::optional<double> run_noise;
  /// Degrees of freedom of run_noise's estimate (the runs it was measured on, less one): the
  /// t reference of the one-run test has no more. Infinity for a value known exactly.
  double run_noise_df = std::numeric_limits<double>::infinity();
  /// Where run_noise comes from, for the verdict's sentence ("noise profile noise.json: 12 runs
  /// on host1"); empty for a value given by hand.
  std::string run_noise_source;
  /// The runs of A and B are pairs in the order given: A_i and B_i ran at the same time, taking
  /// turns (`recompdiag ab` interleaves them), or one right after the other. With two or more
  /// pairs the tests use the per-pair ratios (paired t), so that the load a pair shared cancels;
  /// else each side's spread (Welch). Sides of different sizes are never paired.
  bool paired = false;
  /// The runs of each pair took turns (`recompdiag ab`): step by step when both headers say so
  /// (RunHeader::turn_every_steps), else epoch by epoch. One pair is then tested on the log ratios
  /// of what ran next to each other (ReplicationUnit::kStepPairs, else kEpochPairs), so that the
  /// machine's state both runs saw cancels; implies `paired`. Several pairs that took turns step
  /// by step are each reduced to their step pairs' ratio (PhaseComparison::pairs_by_steps).
  bool turns = false;
  /// Deterministic counts (count_names()) that fail the gate when B has more of them than A in
  /// any phase, whatever the timing says.
  std::vector<std::string> fail_on;
  /// Fewer steady steps than this in a phase of either run draws a warning.
  int64_t min_samples = stats::kMannWhitneyMinSamples;
  /// A steady state whose second half's median differs from its first half's by more than this
  /// fraction draws a warning: the runs' conditions changed while they ran.
  double drift_warning = 0.10;
  /// How the duration of one compile spreads between two processes of the same code: the
  /// standard deviation of the log of one process's compile time over another's (A against A),
  /// which `recompdiag calibrate` measures from the compilers' own clocks. Where a pair's sum is
  /// dominated by the same compiles on both sides (caveats::MatchedCompiles), their times'
  /// difference is judged against this; unset, it decides nothing. Not the steady steps' spread:
  /// a compile is one long event, not a sample of steps.
  std::optional<double> compile_spread;
  /// Degrees of freedom of compile_spread's estimate (the pairs it was measured on, less one).
  double compile_spread_df = std::numeric_limits<double>::infinity();
  /// Configuration keys that are meant to differ (e.g. "mode" in `recompdiag ab`): still listed
  /// in Comparison::config_differences, but not warned about.
  std::vector<std::string> expected_differences;
  stats::BootstrapOptions bootstrap;
  AnalysisOptions analysis;

  /// Throws InputError naming the flag for the first value out of range: threshold in [0, 1)
  /// (printed as the percentage `--threshold` takes), alpha, power and the bootstrap confidence
  /// in (0, 1), at least one bootstrap resample, `fail_on` names from count_names(). `compare`
  /// and `ab` both call it.
  void validate() const;
  /// The settings of the phase tests.
  stats::RatioTestOptions ratio_test() const;
};

/// A deterministic count compared exactly, as `--fail-on` names it, and its one line of help.
struct GateCount {
  std::string name;  ///< "compiles"
  std::string help;  ///< "every compiler's compiles: TorchScript's and torch.compile's ..."
};

/// The deterministic counts compared exactly: the gates of kProbeCounts (probe_counts.h), in its
/// order, which is the report's. `compiles` (every compiler's) is judged for `--fail-on` only: the
/// report lists its parts (jit_compiles, dynamo_compiles). What `--help` and the docs list.
const std::vector<GateCount>& gate_counts();

/// The names of gate_counts().
const std::vector<std::string>& count_names();

/// Parses `--fail-on` ("compiles,syncs"); throws InputError naming the accepted names.
std::vector<std::string> parse_fail_on(const std::string& text);

/// What a comparison concludes.
enum class Verdict { kNoChange, kRegression, kImprovement, kInconclusive };

/// "no_change", "regression", "improvement" or "inconclusive".
const char* to_string(Verdict verdict);

/// The phase tests' unit of replication.
enum class ReplicationUnit {
  kRuns,    ///< Each run's steady median is one observation (two or more runs on a side).
  kBlocks,  ///< One run per side: blocks of consecutive steps, resampled (block bootstrap).
  /// One pair of runs that took turns epoch by epoch: epoch k of A against epoch k of B, a
  /// paired t on the per-epoch log ratios (CompareOptions::turns); the ratio is their geometric
  /// mean (of epoch medians for the steady test, of epoch means for the whole phase), which can
  /// differ a little from the ratio of the phase's medians.
  kEpochPairs,
  /// One pair of runs that took turns step by step (RunHeader::turn_every_steps, the same on both
  /// sides): A's turn k against B's turn k, which ran next to each other. The steady test is
  /// paired_blocks_ratio_test() over the turns' log ratios (of their steady steps' medians), the
  /// whole phase ratio_of_sums_test() over blocks of turns; a level the machine held for both
  /// halves of a pair cancels.
  kStepPairs,
};

/// "runs", "blocks", "epoch_pairs" or "step_pairs".
const char* to_string(ReplicationUnit unit);

/// One phase compared.
struct PhaseComparison {
  int phase = 1;
  int64_t n_a = 0;  ///< Steady steps of A.
  int64_t n_b = 0;
  /// Steady median of A: of its one run, or the geometric mean of its runs' steady medians.
  double median_a_ms = 0.0;
  double median_b_ms = 0.0;
  double p95_a_ms = 0.0;  ///< Of the first run of each side.
  double p95_b_ms = 0.0;
  std::vector<double> run_medians_a_ms;  ///< Each run's steady median.
  std::vector<double> run_medians_b_ms;
  ReplicationUnit unit = ReplicationUnit::kBlocks;
  bool paired = false;        ///< kRuns: tested as pairs (CompareOptions::paired).
  int64_t block_steps_a = 0;  ///< Steps per block (kBlocks).
  int64_t block_steps_b = 0;
  /// Epochs paired in the steady test (kEpochPairs): those with steady steps in both runs.
  int64_t epoch_pairs = 0;
  /// kStepPairs: pairs of turns in the steady test, the blocks of consecutive pairs it rests on
  /// (its effective sample), pairs per block, and steps per turn.
  int64_t step_pairs = 0;
  int64_t pair_blocks = 0;
  int64_t pair_block_length = 0;
  int64_t turn_steps = 0;
  /// kBlocks with a run-to-run spread given (CompareOptions::run_noise), and kRuns: the largest
  /// of the runs' level spreads, (q90 - q10) / 2.563 of their log block medians (an SD had the
  /// blocks been normal). kBlocks: beyond twice the given spread the runs' own step times
  /// contradict it (the machine jumped between levels the spread was not measured under), and no
  /// time verdict rests on it. kRuns: beyond 10% the runs' medians may sit on two levels, and the
  /// exact permutation test (sign flips when paired) bounds the t test's p: 3 runs per side, or
  /// 5 pairs, then give no time verdict; not for pairs by steps (`pairs_by_steps`).
  double level_spread = 0.0;
  /// kRuns of pairs that took turns step by step (CompareOptions::turns, and both headers of every
  /// pair record the same turn_every_steps): each pair's B/A is the median of its step pairs'
  /// ratios, in which the levels the machine jumped between cancel, and the pairs' t test stands
  /// without the permutation bound.
  bool pairs_by_steps = false;
  bool noise_contradicted = false;
  stats::RatioTest test;       ///< B / A with its interval, p, TOST p and detectable effect.
  stats::RatioInterval ratio;  ///< The same ratio and interval, for renderers.
  /// Step-level Mann-Whitney U: shown for reference only; steps are not independent, so the
  /// verdict does not use it.
  stats::MannWhitneyResult mann_whitney;
  /// Every step of the phase, warm-up and compiles included: its mean step time (of one run, or
  /// the geometric mean over the runs) and B / A tested across runs, or across epochs of one run.
  /// It sees a cost that sits in a few slow steps (a compile every epoch), which the steady median
  /// leaves out by design.
  double whole_mean_a_ms = 0.0;
  double whole_mean_b_ms = 0.0;
  stats::RatioTest whole_test;
  double whole_p_holm = 1.0;  ///< whole_test.p adjusted with the steady tests of every phase.
  /// The verdict rests on the whole phase (a change in its slow steps), not the steady median.
  bool whole_decides = false;
  /// The verdict rests on the counted cost of the events that differ (Comparison::counted_costs),
  /// whatever the steady test says.
  bool counted_decides = false;
  double p_holm = 1.0;       ///< test.p adjusted over the phases (Holm).
  double tost_p_holm = 1.0;  ///< test.tost_p adjusted over the phases.
  bool equivalent = false;   ///< TOST proved |B / A - 1| within the threshold.
  /// Runs per side that would settle an inconclusive phase (0 otherwise).
  int runs_needed = 0;
  Verdict verdict = Verdict::kNoChange;
  /// The ratio the verdict rests on: the counted cost's as 1 + its share of A's phase
  /// (counted_decides), the whole phase's (whole_decides), the matched compiles' durations
  /// (compile_time_decides), else the steady median's.
  double decisive_ratio = 1.0;
  /// The pairs of steps dominated by the same compiles on both sides, left out of the whole-phase
  /// test (caveats::MatchedCompiles): how many, their ratio B/A, and, judged against a calibrated
  /// compile spread, its test.
  int64_t matched_compile_pairs = 0;
  double matched_compile_ratio = 1.0;
  std::optional<stats::RatioTest> compile_time_test;
  /// The verdict rests on the matched compiles' durations, beyond the calibrated spread.
  bool compile_time_decides = false;
};

/// A deterministic count that differs between the sides in one phase, compared exactly.
struct CountChange {
  int phase = 1;
  std::string count;  ///< As count_names() names it: "jit_compiles".
  int64_t a_min = 0;  ///< Over the runs of A (equal with one run).
  int64_t a_max = 0;
  int64_t b_min = 0;
  int64_t b_max = 0;
  /// B has more, and `count`, or the count it is a part of (`compiles`), is in
  /// CompareOptions::fail_on.
  bool fails = false;
  /// The CompareOptions::fail_on name that fails it: `count`, or "compiles" for its parts.
  std::string failed_by;
};

/// What the counted events cost in one phase: the price of the counts that differ exactly
/// (compiles, plan builds, cache misses, syncs, copies), measured where they happened. The
/// costed steps are the phase positions (step within the phase) where any run of either side
/// carries one of those events; a run's cost is its time over its steady median at those steps,
/// plus the compile time its compile events report (spent between steps). So a slow step that
/// both runs have, with the event on one side only, cancels. B's cost minus A's gets an interval
/// from the steady steps' spread (each costed step as noisy as a steady step, scaled to its size,
/// and the medians' own error). A count found on most steady steps (a sync every step) is a
/// per-step cost that the steady test prices: it is listed, not costed.
struct CountedCost {
  int phase = 1;
  std::vector<std::string> counts;  ///< The differing counts costed, as count_names() names them.
  /// Differing counts found on most steady steps of a run: priced by the steady test instead.
  std::vector<std::string> per_step_counts;
  double event_steps_a = 0.0;  ///< Its steps carrying the events (mean over the side's runs).
  double event_steps_b = 0.0;
  double cost_s_a = 0.0;  ///< Mean over the side's runs.
  double cost_s_b = 0.0;
  double compile_s_a = 0.0;  ///< Of which compile time between steps.
  double compile_s_b = 0.0;
  double difference_s = 0.0;  ///< cost_s_b - cost_s_a.
  double low_s = 0.0;         ///< Interval of the difference (CompareOptions confidence).
  double high_s = 0.0;
  double confidence = 0.95;
  double phase_s_a = 0.0;  ///< A's phase: every step plus compile time between steps (mean).
  double share = 0.0;      ///< difference_s / phase_s_a: the cost as a fraction of A's phase.
  double p = 1.0;          ///< Two-sided p of "the events cost B nothing more than A".
  /// The difference runs against the counts: B slower where it has only fewer of them, or
  /// faster where it has only more. Not their cost (something else happened at those steps):
  /// it decides no verdict.
  bool against_counts = false;
  /// B's compile time minus A's, as the costed compilers' own clocks recorded it (TorchScript's
  /// compile events, torch.compile's compile_ms): measured, not estimated.
  double measured_s = 0.0;
  /// The measured compile time bounds the difference (B has only more of the costed compiles and
  /// compiled longer, or only fewer and compiled less): difference_s and the interval are at least
  /// measured_s from zero, and the bound alone decides when it is beyond the threshold.
  bool measured_bounds = false;
  /// kRegression (kImprovement) when the share is beyond +threshold (-threshold) with p below
  /// alpha; else kNoChange: the cost is too small or too uncertain to decide.
  Verdict verdict = Verdict::kNoChange;
  /// The step times' own estimate of the difference and its interval: difference_s, low_s and
  /// high_s before the measured compile time bounds them (measured_bounds).
  double steps_s = 0.0;
  double steps_low_s = 0.0;
  double steps_high_s = 0.0;
  /// The costed counts that name its causes, in `counts`' order: cache misses that are no more
  /// than the plan builds named beside them (a plan build is a cache miss) are left out.
  std::vector<std::string> cause_counts;
};

/// A count in the steps around a phase switch: a part of an umbrella count (kProbeCounts'
/// `part_of`: a compile of one compiler, a cache miss of one cache), as its gate counts it.
struct SwitchCount {
  std::string count;  ///< kProbeCounts' key: "jit_compiles", "plan_builds", ...
  int64_t n = 0;
};

/// The cost of one phase switch in both runs.
struct SwitchComparison {
  int to_phase = 2;
  double tax_s_a = 0.0;  ///< SwitchCost::tax_s of A: slow steps plus compile time.
  double tax_s_b = 0.0;
  double extra_s_a = 0.0;  ///< The slow-steps part of A's tax.
  double extra_s_b = 0.0;
  double compile_s_a = 0.0;  ///< The compile-time part of A's tax.
  double compile_s_b = 0.0;
  int64_t recovery_steps_a = 0;
  int64_t recovery_steps_b = 0;
  double tax_s_difference = 0.0;  ///< tax_s_b - tax_s_a.
  /// What each first run compiled or missed a cache of around the switch (SwitchCost::around):
  /// the umbrellas' parts with a count above zero, in kProbeCounts' order. What the story names.
  std::vector<SwitchCount> counted_a;
  std::vector<SwitchCount> counted_b;
};

/// A configuration value that differs between the runs (JSON text of each side; "(absent)").
struct ConfigDifference {
  std::string key;  ///< Dotted path, e.g. "config.phase2.lr" or "mode".
  std::string a;
  std::string b;
};

/// The leaves of two JSON documents that differ, keyed by dotted path under `prefix`
/// ("config.plateau.factor"): objects are walked, arrays and scalars are leaves. Each side's JSON
/// text, or "(absent)". Sorted by key. What compare_runs() lists as config differences, and what
/// `ab` passes as expected differences.
std::vector<ConfigDifference> diff_json(const nlohmann::json& a, const nlohmann::json& b,
                                        const std::string& prefix);

/// What weakens or qualifies a comparison's verdict: its caveats, as data (reports::warnings()
/// words them). One kind per struct, one caveat per cause, naming every run or phase it concerns.
namespace caveats {

/// `phase` started (a phase_start event) but no run has a step in it: the runs stopped at the
/// switch, and it is left out.
struct PhaseNotReached {
  int phase = 0;
};

/// One run per side: the step times of `paths` stay alike for longer than the longest block
/// (`block_steps`) in `phase`, so the interval may be too narrow.
struct IntervalTooNarrow {
  int phase = 0;
  std::vector<std::string> paths;
  int64_t block_steps = 0;
};

/// `phase`: the runs' own step times jump between levels `level_spread` apart (the spread of
/// their block medians), beyond the run-to-run spread given (`run_noise`): no time verdict rests
/// on it.
struct LevelsBeyondNoise {
  int phase = 0;
  double level_spread = 0.0;
  double run_noise = 0.0;
};

/// Runs whose steady step time drifted from the first half of a phase to the second by more
/// than CompareOptions::drift_warning: each run's path, phase and drift (second half's median over
/// the first's).
struct Drift {
  struct Run {
    std::string path;
    int phase = 0;
    double ratio = 1.0;
  };
  std::vector<Run> runs;
};

/// Phases with fewer steady steps than CompareOptions::min_samples in a run: the fewest of
/// either side's runs, per phase.
struct FewSteadySteps {
  struct Phase {
    int phase = 0;
    int64_t fewest_a = 0;
    int64_t fewest_b = 0;
  };
  std::vector<Phase> phases;
};

/// The runs' configurations differ where no difference was expected
/// (CompareOptions::expected_differences).
struct ConfigDiffers {
  std::vector<ConfigDifference> differences;
};

/// The runs took their turns at different grains (RunHeader::turn_every_steps; 0: at epoch
/// boundaries), so they are paired epoch by epoch.
struct TurnGrains {
  int64_t every_a = 0;
  int64_t every_b = 0;
};

/// A run file's own warning (RunAnalysis::warnings): a skipped line, no summary, a failed run.
struct RunFileWarning {
  std::string text;
};

/// `phase`, a pair that took turns step by step: a few pairs of steps carry most of the phase's
/// time (a first compile) and the same compiles, cache misses and other counted events on both
/// sides. The whole-phase test leaves them out, since one pair of compiles is one observation
/// whatever the blocks around it; their times are judged against how a compile's time spreads
/// between two processes of the same code (CompareOptions::compile_spread), or, unmeasured, decide
/// nothing.
struct MatchedCompiles {
  int phase = 0;
  int64_t pairs = 0;  ///< Pairs of steps left out.
  double a_ms = 0.0;  ///< Their wall time, A's and B's.
  double b_ms = 0.0;
  double share = 0.0;  ///< Of the phase's wall time, both sides together.
  /// The spread the difference was judged against (CompareOptions::compile_spread), if any, and
  /// whether the difference is beyond it: beyond the threshold with p below alpha, the phase's
  /// verdict then rests on it (PhaseComparison::compile_time_decides).
  std::optional<double> spread;
  bool beyond_spread = false;
};

}  // namespace caveats

/// One caveat of a comparison.
using Caveat =
    std::variant<caveats::PhaseNotReached, caveats::IntervalTooNarrow, caveats::LevelsBeyondNoise,
                 caveats::Drift, caveats::FewSteadySteps, caveats::ConfigDiffers,
                 caveats::TurnGrains, caveats::RunFileWarning, caveats::MatchedCompiles>;

/// Everything compare_runs() finds.
struct Comparison {
  RunAnalysis a;  ///< The first run of A, for its details (slow stretches, charts).
  RunAnalysis b;  ///< The first run of B.
  std::vector<std::string> paths_a;  ///< Every run of A.
  std::vector<std::string> paths_b;
  CompareOptions options;
  ReplicationUnit unit = ReplicationUnit::kBlocks;
  std::vector<PhaseComparison> phases;
  std::vector<CountChange> count_changes;  ///< Counts that differ, phase by phase.
  /// What the differing counts cost, per phase where a costed count differs.
  std::vector<CountedCost> counted_costs;
  std::vector<SwitchComparison> switches;
  std::vector<ConfigDifference> config_differences;
  Verdict verdict = Verdict::kNoChange;
  /// Step time alone, over the phases' steady and whole-phase tests: kRegression (kImprovement)
  /// when a phase is slower (faster) beyond the threshold with significance, kNoChange when every
  /// phase's steady median is proven within it, else kInconclusive.
  Verdict step_time_verdict = Verdict::kNoChange;
  /// The counted events alone: kRegression when a --fail-on count grew or a counted cost regressed,
  /// kImprovement when a counted cost improved, kInconclusive when a cost is not told from noise,
  /// else kNoChange (also when no count differs).
  Verdict counts_verdict = Verdict::kNoChange;
  /// What the runs learned (pairs A_i, B_i): part of the summary when B's training regressed.
  ConvergenceComparison convergence;
  /// When the first run of A (of B) is a data-parallel job: its per-rank table and stragglers.
  std::optional<JobAnalysis> job_a;
  std::optional<JobAnalysis> job_b;
  /// The phase whose verdict is the comparison's: the slowest regressed phase, else the fastest
  /// improved one, else the least settled inconclusive one (by PhaseComparison::decisive_ratio).
  /// None when every phase is no change, or only a `fail_on` count regressed.
  std::optional<int> deciding_phase;
  /// A regression's deciding phase: the strongest probe signal by which B's phase differs from
  /// A's (rank_phase_signals()); none when no signal differs, or the verdict is not a regression
  /// of the time a phase took.
  std::optional<Signal> deciding_signal;
  /// What weakens or qualifies the verdict, in the order 0.6 warned of it.
  std::vector<Caveat> caveats;
  /// What torch.compile did differently in the first runs of A and B, frame by frame
  /// (diff_compile_findings() of a.compile and b.compile).
  CompileDiff compile_diff;
};

/// Compares the runs of B against the baseline runs of A.
///
/// Per phase, B / A of steady medians and of the whole phase's mean step time. A phase regresses
/// when either ratio is above 1 + threshold with its Holm-adjusted p below alpha (the steady
/// median first); it improves symmetrically (below 1 - threshold). It is no change when the
/// Holm-adjusted TOST p of the steady median is below alpha; else inconclusive. The comparison
/// regresses when a phase does or a count named in `fail_on` grew; else it improves when a phase
/// does; else it is inconclusive when a phase is; else no change.
///
/// Throws InputError naming the file when: a side is empty, a file is on both sides or twice on
/// one, a run has no steps, a phase present in one run has no steps in another, or the runs of
/// one side differ in configuration (seeds may differ).
Comparison compare_run_sets(const std::vector<RunFile>& a, const std::vector<RunFile>& b,
                            const CompareOptions& options = {});
/// The same of runs held as columns (read_columnar_run()): what a million-step run needs.
Comparison compare_run_sets(const std::vector<ColumnarRun>& a, const std::vector<ColumnarRun>& b,
                            const CompareOptions& options = {});

/// compare_run_sets() of runs that may be data-parallel jobs (group_rank_files()): a job is one
/// run whose step takes as long as its slowest rank's (job_run()), and the first run of each side,
/// when it is a job, also gets its per-rank table and straggler analysis (job_a, job_b). Throws
/// as compare_run_sets().
Comparison compare_jobs(const std::vector<RunSet>& a, const std::vector<RunSet>& b,
                        const CompareOptions& options = {});

/// compare_run_sets() of one run per side.
Comparison compare_runs(const RunFile& a, const RunFile& b, const CompareOptions& options = {});
/// The same of runs held as columns.
Comparison compare_runs(const ColumnarRun& a, const ColumnarRun& b,
                        const CompareOptions& options = {});

/// Exit code for a CI gate: 1 on regression, else 0.
int exit_code_for(Verdict verdict);

/// Exit code for a CI gate: 1 on regression (timing or a `fail_on` count), 1 on inconclusive
/// when `strict_inconclusive`, else 0.
int exit_code_for(const Comparison& comparison, bool strict_inconclusive);

}  // namespace recompdiag
