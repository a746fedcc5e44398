#pragma once
/// \file
/// Robust statistics for step times: pure functions over plain vectors that return plain structs.
///
/// Nothing here reads files or formats text; analysis.h and compare.h build on these. Every
/// function is thread-safe (no shared state) and deterministic for a given seed.

#include <cstdint>
#include <string>
#include <vector>

namespace recompdiag::stats {

/// Median of `values`; NaN when empty. Takes a copy because it partially reorders.
double median(std::vector<double> values);

/// Median of values that are already sorted ascending; NaN when empty.
double median_sorted(const std::vector<double>& sorted);

/// The `q` quantile (0 <= q <= 1) with linear interpolation between order statistics (R's type
/// 7, numpy's default); NaN when empty.
double quantile(std::vector<double> values, double q);

/// Quantile of values already sorted ascending; see quantile().
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Median absolute deviation from the median, unscaled (multiply by 1.4826 for a normal sigma);
/// NaN when empty.
double mad(const std::vector<double>& values);

/// The same of values already sorted ascending, in O(log n) and without a copy: the deviations
/// below and above the median are two sorted sequences, and their median is found by bisection.
double mad_sorted(const std::vector<double>& sorted);

/// Median of [first, last), reordering it (no copy); NaN when empty. What median() computes.
double median_in_place(double* first, double* last);

/// Sorts ascending: a radix sort on the values' bits for large vectors (several times faster
/// than std::sort on a million step times), std::sort for small ones. The same order as
/// std::sort, except that -0.0 comes before +0.0 and NaNs go to the ends.
void sort_ascending(double* first, double* last);
inline void sort_ascending(std::vector<double>& values) {
  sort_ascending(values.data(), values.data() + values.size());
}

/// Mean and sample variance from a two-pass computation (no catastrophic cancellation).
struct MeanVariance {
  int64_t n = 0;
  double mean = 0.0;      ///< NaN when n == 0.
  double variance = 0.0;  ///< Sample variance (n - 1 denominator); 0 when n < 2.
};

/// Mean and sample variance of `values`, two passes.
MeanVariance mean_variance(const std::vector<double>& values);

/// Settings of the bootstrap.
struct BootstrapOptions {
  int resamples = 2000;      ///< Bootstrap replicates.
  double confidence = 0.95;  ///< Two-sided coverage of the percentile interval.
  uint64_t seed = 20240501;  ///< Seed of the generator; the same seed gives the same interval.

  /// Throws InputError for fewer than one resample or a confidence outside (0, 1), in the words
  /// of the flags that set them (`--resamples`, `--confidence` as a percentage).
  void validate() const;
};

/// A ratio with its bootstrap percentile interval.
struct RatioInterval {
  double ratio = 0.0;  ///< Point estimate: median(b) / median(a).
  double low = 0.0;    ///< Lower bound of the interval.
  double high = 0.0;   ///< Upper bound of the interval.
  double confidence = 0.95;
  int resamples = 0;
};

/// Bootstrap percentile interval of median(b) / median(a), resampling each sample independently.
///
/// Each replicate draws the median of a resample directly from the order-statistic distribution
/// (the k-th smallest of n uniform indices is Beta(k, n + 1 - k)), which is exactly what resampling
/// n values with replacement and taking the median gives, at O(1) per replicate instead of O(n).
/// That keeps a million-step comparison cheap. Throws std::invalid_argument when either sample is
/// empty.
RatioInterval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                     const BootstrapOptions& options = {});

/// Same as bootstrap_median_ratio() for samples already sorted ascending (avoids two sorts).
RatioInterval bootstrap_median_ratio_sorted(const std::vector<double>& sorted_a,
                                            const std::vector<double>& sorted_b,
                                            const BootstrapOptions& options = {});

/// Below this many values in either sample the normal approximation of Mann-Whitney U is rough.
inline constexpr int64_t kMannWhitneyMinSamples = 20;

/// Result of a two-sided Mann-Whitney U test.
struct MannWhitneyResult {
  int64_t n_a = 0;
  int64_t n_b = 0;
  double u_a = 0.0;  ///< U of sample a: pairs (a_i, b_j) with a_i > b_j, ties counting one half.
  double u_b = 0.0;  ///< n_a * n_b - u_a.
  double z = 0.0;    ///< Normal score with tie and continuity correction (sign: b above a > 0).
  double p = 1.0;    ///< Two-sided p-value from the normal approximation.
  bool too_few_samples = false;  ///< Either sample has fewer than the minimum.
  std::string warning;           ///< Human-readable when too_few_samples; else empty.
};

/// Two-sided Mann-Whitney U test (Wilcoxon rank-sum) with average ranks for ties, the tie
/// correction of the variance and a continuity correction; p from the normal approximation.
/// Sets too_few_samples and a warning when either sample has fewer than `min_samples` values.
/// Empty samples give p = 1 and a warning.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t min_samples = kMannWhitneyMinSamples);

/// Same as mann_whitney_u() for samples already sorted ascending: one merge, O(n_a + n_b).
MannWhitneyResult mann_whitney_u_sorted(const std::vector<double>& sorted_a,
                                        const std::vector<double>& sorted_b,
                                        int64_t min_samples = kMannWhitneyMinSamples);

/// Upper tail of the standard normal distribution, P(Z > z).
double normal_upper_tail(double z);

/// Inverse of the standard normal distribution function: z with P(Z <= z) = p, for 0 < p < 1.
double normal_quantile(double p);

/// Upper tail of Student's t distribution with `df` degrees of freedom, P(T > t); `df` = infinity
/// gives the normal tail. Throws std::invalid_argument when df <= 0.
double student_t_upper_tail(double t, double df);

/// Inverse of Student's t distribution function: t with P(T <= t) = p, for 0 < p < 1.
double student_t_quantile(double p, double df);

/// Lan and DeMets's alpha spending ("Discrete sequential boundaries for clinical trials",
/// Biometrika 70, 1983) with the O'Brien-Fleming-like function: the type I error a sequence of
/// looks may have spent by information fraction `t` in (0, 1], 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)):
/// little early, all of alpha at t = 1.
double obrien_fleming_spent(double alpha, double t);

/// The level of look `look` (1-based) of at most `looks` equally spaced ones: what the spending
/// function allows between the look before and this one. The levels add up to `alpha` over the
/// looks, so testing look k at its level keeps the error of the whole sequence at `alpha` by the
/// union bound, whatever the dependence between the looks' tests (conservative: the exact
/// boundaries of a group-sequential design would spend it less strictly). Throws
/// std::invalid_argument unless 1 <= look <= looks and 0 < alpha < 1.
double sequential_look_alpha(double alpha, int look, int looks);

/// Holm's step-down adjustment of p-values tested together: the i-th smallest is multiplied by
/// (m - i + 1), made monotone and capped at 1. Rejecting where the adjusted p is below alpha
/// keeps the family-wise error rate at alpha. Returns the adjusted values in the input order.
std::vector<double> holm_adjust(const std::vector<double>& p);

/// What a ratio test needs besides the data.
struct RatioTestOptions {
  double confidence = 0.95;  ///< Two-sided coverage of the reported interval.
  double alpha = 0.05;       ///< Significance level of the tests and of the detectable effect.
  double threshold = 0.05;   ///< Equivalence margin: "no change" means B/A in [1 - t, 1 + t].
  double power = 0.80;       ///< Power at which the minimum detectable effect is computed.

  /// Throws InputError for a threshold outside [0, 1), or an alpha, power or confidence outside
  /// (0, 1), in the words of the flags that set them (`--threshold` and `--confidence` as
  /// percentages). CompareOptions::validate() calls it on ratio_test().
  void validate() const;
};

/// B / A of step times, tested on the log scale: an estimate with its standard error and the
/// t reference distribution it is judged against.
struct RatioTest {
  int64_t n_a = 0;  ///< Observations of A: runs, or blocks of consecutive steps.
  int64_t n_b = 0;
  double ratio = 1.0;  ///< Point estimate of B / A.
  double low = 1.0;    ///< Interval at `confidence`.
  double high = 1.0;
  double confidence = 0.95;
  double se_log = 0.0;  ///< Standard error of log(B / A).
  double df = 0.0;      ///< Degrees of freedom of the t reference (infinity: normal).
  double p = 1.0;       ///< Two-sided p of "B / A = 1".
  /// Two one-sided tests (TOST) of "B / A outside [1 - threshold, 1 + threshold]": the larger
  /// of the two p-values. Small: the change is proven smaller than the threshold.
  double tost_p = 1.0;
  /// Smallest change (a fraction: 0.08 = 8%) detected with `power` at `alpha` at this noise.
  double mde = 0.0;
};

/// Builds the interval and tests from an estimate of log(B / A), its standard error and degrees
/// of freedom. A zero standard error gives a zero-width interval and p of 0 or 1.
RatioTest ratio_test_from_log(double log_ratio, double se_log, double df,
                              const RatioTestOptions& options = {});

/// Welch-Satterthwaite degrees of freedom of a difference of two means, from each mean's variance
/// (`var_mean_a` = variance / n) and its observations; n_a + n_b - 2 when both variances are 0.
double welch_df(double var_mean_a, int64_t n_a, double var_mean_b, int64_t n_b);

/// Welch's t test on the logs of per-run values (each run's steady median): runs as the unit of
/// replication. With two or more values per side, Welch's standard error and degrees of freedom;
/// with one value on one side, that side is taken to share the other side's variance (a new run
/// against a stored baseline of several). Throws std::invalid_argument when a side is empty,
/// both have one value, or a value is not positive.
RatioTest run_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                         const RatioTestOptions& options = {});

/// Paired t test on the logs of per-pair ratios b[i] / a[i] (each pair's runs shared the
/// machine's state: taking turns, or one right after the other), so that what the pair shares,
/// a busy machine, cancels. Throws std::invalid_argument when the sides differ in length, have
/// fewer than two pairs, or a value is not positive.
RatioTest paired_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                            const RatioTestOptions& options = {});

/// Yuen's trimmed-mean t on the logs of per-pair ratios b[i] / a[i]: the `trim` fraction of the
/// smallest and of the largest log ratios leave the mean (their winsorized values still enter the
/// variance), so that a few pairs hit by a burst of load, which swing by tens of percent where
/// the rest agree within a few, do not swamp the interval. t with n - 2g - 1 degrees of freedom
/// (g = floor(trim n), at least two values kept). trim 0 is paired_ratio_test(). Throws
/// std::invalid_argument as paired_ratio_test() does, and for trim outside [0, 0.5).
RatioTest trimmed_paired_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                                    double trim = 0.2, const RatioTestOptions& options = {});

/// Exact permutation tests for a few runs per side, where a t test leans on normal run medians
/// and a machine that jumps between levels puts them on two: what the arrangement of the values
/// alone can say. Each returns the two-sided p and the smallest p any arrangement of this many
/// values could give (at or above alpha, no outcome could be significant).
struct PermutationP {
  double p = 1.0;
  double min_p = 1.0;      ///< Two-sided; one-sided it is half as large.
  bool exact = true;       ///< False past the enumeration limit: p is 0 and min_p 0 (unused).
};

/// Difference of the means of `a` and `b` (logs of run medians) against every split of the pooled
/// values into groups of their sizes. Exact up to 100,000 splits.
PermutationP permutation_test(const std::vector<double>& a, const std::vector<double>& b);

/// Mean of `d` (logs of paired ratios) against every flip of their signs. Exact up to 2^16.
PermutationP sign_flip_test(const std::vector<double>& d);

/// Yuen's trimmed-mean t on log ratios already taken (trimmed_paired_ratio_test() on b[i] / a[i]
/// is this on log(b[i] / a[i])). Throws std::invalid_argument with fewer than two values or trim
/// outside [0, 0.5).
RatioTest trimmed_log_ratio_test(std::vector<double> log_ratios, double trim = 0.2,
                                 const RatioTestOptions& options = {});

/// B / A from pairs of steps (or of turns of a few steps) that ran next to each other: two runs
/// taking turns step by step on one machine. Each pair's log ratio cancels the level the machine
/// was at; what remains is autocorrelated where a level lasted longer than a pair, and has
/// outliers where a jump fell between a pair's two halves.
struct PairedBlocksTest {
  RatioTest test;        ///< n_a = n_b = blocks: the effective sample.
  int64_t pairs = 0;     ///< Pairs summarised.
  int64_t blocks = 0;    ///< Blocks of consecutive pairs: the effective sample the test rests on.
  int64_t block_length = 0;         ///< Pairs per block (the last takes the remainder).
  int64_t autocorrelation_lag = 0;  ///< As StepBlocks: lag where the pairs stop being alike.
  bool autocorrelation_capped = false;  ///< The lag outlasts the longest block allowed.
};

/// The fewest blocks paired_blocks_ratio_test() cuts pairs into, where it has the pairs.
inline constexpr int64_t kMinPairBlocks = 20;

/// Tests the log ratios of pairs in the order they ran: cut into blocks of twice their
/// autocorrelation lag (at most pairs / kMinPairBlocks long) whose medians are nearly
/// independent, then Yuen's `trim` trimmed-mean t over the block medians, so that blocks hit by a
/// level jump on one side only do not swamp the rest. Throws std::invalid_argument with fewer
/// than three pairs.
PairedBlocksTest paired_blocks_ratio_test(const std::vector<double>& log_ratios, double trim = 0.2,
                                          const RatioTestOptions& options = {});

/// B / A of the sums of paired blocks (a block of A's steps and the block of B's that ran beside
/// it): sum(b) / sum(a), the ratio of the means, with a standard error from the blocks'
/// residuals b_k - r a_k (the ratio estimator's delta method) and t with blocks - 1 degrees of
/// freedom. Not trimmed: the slow steps a mean is taken for must count. Throws
/// std::invalid_argument when the sides differ in length, have fewer than two blocks, or a sum is
/// not positive.
RatioTest ratio_of_sums_test(const std::vector<double>& a, const std::vector<double>& b,
                             const RatioTestOptions& options = {});

/// One benchmark arm against a baseline arm from paired rounds (each round timed every arm, so a
/// load that a round shared cancels), and whether the rounds were enough to tell.
struct ArmRatio {
  RatioTest test;  ///< Yuen's trimmed paired test of arm / baseline per round.
  /// The interval includes 1.0: these rounds cannot tell the arm from the baseline.
  bool includes_one = true;
  /// The interval is wider than the effect it estimates (high - low > |ratio - 1|): even where
  /// it excludes 1.0, the size of the effect is not pinned down.
  bool wider_than_effect = true;
  /// Rounds at which, at the noise measured, the interval would be no wider than the effect
  /// (which also excludes 1.0); `max_rounds` when the effect is zero or needs more.
  int rounds_to_settle = 0;
};

/// Summarises arm[i] / baseline[i] over the rounds i with trimmed_paired_ratio_test(baseline,
/// arm, trim, options). Throws std::invalid_argument as that test does (fewer than two rounds,
/// sides of different length, a value not positive).
ArmRatio arm_ratio(const std::vector<double>& baseline, const std::vector<double>& arm,
                   double trim = 0.2, const RatioTestOptions& options = {},
                   int max_rounds = 100000);

/// Runs per side at which a change as large as the threshold would be detected (and a smaller
/// one ruled out) with `power` at `alpha`, given `se_log` measured with `runs` per side. Capped
/// at `max_runs`.
int runs_needed(double se_log, int runs, const RatioTestOptions& options, int max_runs = 1000);

/// Consecutive step times of one run cut into blocks, for the block bootstrap.
struct StepBlocks {
  int64_t steps = 0;         ///< Steps summarised.
  int64_t block_length = 0;  ///< Steps per block (the last block takes the remainder).
  /// Lag at which the autocorrelation of log step times first falls below 2 / sqrt(n): steps
  /// this far apart are no longer detectably alike.
  int64_t autocorrelation_lag = 0;
  /// The autocorrelation outlasts the longest block allowed: the interval may be too narrow.
  bool autocorrelation_capped = false;
  std::vector<double> sorted_log_medians;  ///< log of each block's median, ascending.
};

/// Cuts `series` (step times in step order, > 0) into blocks of max(`min_block_length`, twice
/// the autocorrelation lag) steps, at most n / `min_blocks` long, and keeps each block's median.
StepBlocks make_step_blocks(const std::vector<double>& series, int64_t min_block_length = 1,
                            int64_t min_blocks = 8);
/// make_step_blocks() of values already on the log scale (any sign): `logs` in order.
StepBlocks make_log_blocks(std::vector<double> logs, int64_t min_block_length = 1,
                           int64_t min_blocks = 8);

/// Block bootstrap of B / A for one run per side. Each replicate resamples the blocks of each
/// run with replacement and takes the median of their medians (drawn directly from the
/// order-statistic distribution, as bootstrap_median_ratio() does); the spread of the replicates'
/// log ratios is the standard error, judged against t with min(blocks) - 1 degrees of freedom
/// around `log_ratio` (the runs' steady medians). Blocks carry the autocorrelation within a run
/// that resampling single steps destroys; no within-run resampling sees a shift between runs.
/// Throws std::invalid_argument when a side has no blocks.
RatioTest block_bootstrap_ratio_test(const StepBlocks& a, const StepBlocks& b, double log_ratio,
                                     const BootstrapOptions& bootstrap = {},
                                     const RatioTestOptions& options = {});

}  // namespace recompdiag::stats
