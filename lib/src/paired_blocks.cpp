// B / A of runs that took turns step by step: the pairs' log ratios tested in blocks as long as
// they stay alike (Yuen's trimmed t over block medians), and the ratio of paired sums.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

namespace {

// 1 + 2 sum of Bartlett-weighted autocorrelations of `x` (winsorized at its 20% and 80%
// quantiles, so that a few straddled jumps do not make them), over Newey and West's bandwidth
// 4 (n / 100)^(2/9): how much autocorrelation that the blocks' cut missed (the first lag below
// 2 / sqrt(n) is a weak cut on a few dozen pairs) widens the variance of a mean. At least 1.
double long_run_variance_factor(const std::vector<double>& x) {
  const size_t n = x.size();
  if (n < 8) return 1.0;
  std::vector<double> sorted(x);
  std::sort(sorted.begin(), sorted.end());
  const double lo = sorted[n / 5];
  const double hi = sorted[n - 1 - n / 5];
  std::vector<double> w;
  w.reserve(n);
  for (double v : x) w.push_back(std::clamp(v, lo, hi));
  const double mean = mean_variance(w).mean;
  double c0 = 0.0;
  for (double v : w) c0 += (v - mean) * (v - mean);
  if (!(c0 > 0.0)) return 1.0;
  const auto bandwidth = static_cast<size_t>(
      std::max(1.0, std::floor(4.0 * std::pow(static_cast<double>(n) / 100.0, 2.0 / 9.0))));
  double factor = 1.0;
  for (size_t lag = 1; lag <= bandwidth && lag < n; ++lag) {
    double c = 0.0;
    for (size_t t = 0; t + lag < n; ++t) c += (w[t] - mean) * (w[t + lag] - mean);
    factor += 2.0 * (1.0 - static_cast<double>(lag) / static_cast<double>(bandwidth + 1)) * c / c0;
  }
  return std::max(1.0, factor);
}

}  // namespace

PairedBlocksTest paired_blocks_ratio_test(const std::vector<double>& log_ratios, double trim,
                                          const RatioTestOptions& options) {
  if (log_ratios.size() < 3) {
    throw std::invalid_argument("paired_blocks_ratio_test: fewer than three pairs");
  }
  const StepBlocks blocks = make_log_blocks(log_ratios, 1, kMinPairBlocks);
  PairedBlocksTest out;
  out.pairs = blocks.steps;
  out.blocks = static_cast<int64_t>(blocks.sorted_log_medians.size());
  out.block_length = blocks.block_length;
  out.autocorrelation_lag = blocks.autocorrelation_lag;
  out.autocorrelation_capped = blocks.autocorrelation_capped;
  if (out.blocks >= 2) {
    const RatioTest yuen = trimmed_log_ratio_test(blocks.sorted_log_medians, trim, options);
    // The block medians of blocks of one or two pairs still carry what autocorrelation the
    // blocks' cut missed: widen by the pairs' long-run variance where it is larger than one.
    const double factor = out.block_length <= 2 ? long_run_variance_factor(log_ratios) : 1.0;
    out.test = ratio_test_from_log(std::log(yuen.ratio), yuen.se_log * std::sqrt(factor), yuen.df,
                                   options);
  } else {
    // One block: its median is the estimate, and nothing measures its noise.
    out.test = ratio_test_from_log(blocks.sorted_log_medians.front(),
                                   std::numeric_limits<double>::infinity(), 1.0, options);
  }
  out.test.n_a = out.test.n_b = out.blocks;
  return out;
}

RatioTest ratio_of_sums_test(const std::vector<double>& a, const std::vector<double>& b,
                             const RatioTestOptions& options) {
  if (a.size() != b.size()) throw std::invalid_argument("ratio_of_sums_test: sides differ");
  if (a.size() < 2) throw std::invalid_argument("ratio_of_sums_test: fewer than two blocks");
  double sum_a = 0.0;
  double sum_b = 0.0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!(a[k] > 0.0) || !(b[k] > 0.0) || !std::isfinite(a[k]) || !std::isfinite(b[k])) {
      throw std::invalid_argument("ratio_of_sums_test: sums must be positive");
    }
    sum_a += a[k];
    sum_b += b[k];
  }
  const double r = sum_b / sum_a;
  double squares = 0.0;
  double fourths = 0.0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double e = b[k] - r * a[k];
    squares += e * e;
    fourths += e * e * e * e;
  }
  const double n = static_cast<double>(a.size());
  // Var(r) ~ sum(e^2) n / ((n - 1) sum(a)^2); on the log scale divided by r^2.
  const double se_log = std::sqrt(squares * n / (n - 1.0)) / sum_b;
  // A variance made of unequal parts has fewer degrees of freedom than parts: (sum e^2)^2 /
  // sum e^4 (Satterthwaite's), n with equal residuals, near 1 where one block dominates (the
  // switch's compile steps: one process's compile against the other's, a single observation).
  const double satterthwaite = squares * squares / fourths;
  const double df = fourths > 0.0 && std::isfinite(satterthwaite)
                        ? std::clamp(satterthwaite, 1.0, n - 1.0)
                        : n - 1.0;
  RatioTest t = ratio_test_from_log(std::log(r), se_log, df, options);
  t.n_a = t.n_b = static_cast<int64_t>(a.size());
  return t;
}

}  // namespace recompdiag::stats
