// B / A of runs that took turns step by step: the pairs' log ratios tested in blocks as long as
// they stay alike (Yuen's trimmed t over block medians), and the ratio of paired sums.

#include <cmath>
#include <limits>
#include <stdexcept>

#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

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
    out.test = trimmed_log_ratio_test(blocks.sorted_log_medians, trim, options);
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
    if (!(a[k] > 0.0) || !(b[k] > 0.0)) {
      throw std::invalid_argument("ratio_of_sums_test: sums must be positive");
    }
    sum_a += a[k];
    sum_b += b[k];
  }
  const double r = sum_b / sum_a;
  double squares = 0.0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double e = b[k] - r * a[k];
    squares += e * e;
  }
  const double n = static_cast<double>(a.size());
  // Var(r) ~ sum(e^2) n / ((n - 1) sum(a)^2); on the log scale divided by r^2.
  const double se_log = std::sqrt(squares * n / (n - 1.0)) / sum_b;
  RatioTest t = ratio_test_from_log(std::log(r), se_log, n - 1.0, options);
  t.n_a = t.n_b = static_cast<int64_t>(a.size());
  return t;
}

}  // namespace recompdiag::stats
