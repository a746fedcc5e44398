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

}  // namespace recompdiag::stats
