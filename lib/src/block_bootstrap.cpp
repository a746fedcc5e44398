// The block bootstrap of B / A for one run per side: blocks of consecutive steps keep the
// autocorrelation within a run that resampling single steps destroys.

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "detail/random.h"
#include "detail/resample.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

namespace {

constexpr int64_t kMaxLag = 256;  // bounds the O(n x lag) search on very long runs

// First lag at which the autocorrelation of `x` falls below 2 / sqrt(n); max_lag + 1 if none.
int64_t first_insignificant_lag(const std::vector<double>& x, int64_t max_lag) {
  const auto n = static_cast<int64_t>(x.size());
  if (n < 3) return 1;
  const double mean = mean_variance(x).mean;
  double c0 = 0.0;
  for (double v : x) c0 += (v - mean) * (v - mean);
  if (!(c0 > 0.0)) return 1;
  const double bound = 2.0 / std::sqrt(static_cast<double>(n));
  for (int64_t lag = 1; lag <= max_lag && lag < n; ++lag) {
    double c = 0.0;
    for (int64_t t = 0; t + lag < n; ++t) {
      c += (x[static_cast<size_t>(t)] - mean) * (x[static_cast<size_t>(t + lag)] - mean);
    }
    if (c / c0 < bound) return lag;
  }
  return max_lag + 1;
}

}  // namespace

StepBlocks make_step_blocks(const std::vector<double>& series, int64_t min_block_length,
                            int64_t min_blocks) {
  std::vector<double> logs;
  logs.reserve(series.size());
  for (double v : series) logs.push_back(std::log(std::max(v, 1e-12)));
  return make_log_blocks(std::move(logs), min_block_length, min_blocks);
}

StepBlocks make_log_blocks(std::vector<double> logs, int64_t min_block_length,
                           int64_t min_blocks) {
  StepBlocks out;
  out.steps = static_cast<int64_t>(logs.size());
  if (logs.empty()) return out;
  const int64_t longest = std::max<int64_t>(1, out.steps / std::max<int64_t>(min_blocks, 1));
  const int64_t max_lag = std::min(kMaxLag, std::max<int64_t>(1, longest / 2));
  out.autocorrelation_lag = first_insignificant_lag(logs, max_lag);
  out.autocorrelation_capped = out.autocorrelation_lag > max_lag && out.steps >= 2 * min_blocks;
  // Twice the lag: neighbouring blocks' medians are then nearly independent.
  out.block_length =
      std::clamp<int64_t>(std::max(min_block_length, 2 * out.autocorrelation_lag), 1, longest);
  const int64_t blocks = std::max<int64_t>(1, out.steps / out.block_length);
  // Each block's median by selection in place: `logs` is not needed in step order after this.
  out.sorted_log_medians.reserve(static_cast<size_t>(blocks));
  for (int64_t k = 0; k < blocks; ++k) {
    double* first = logs.data() + k * out.block_length;
    double* last = k + 1 == blocks ? logs.data() + logs.size() : first + out.block_length;
    out.sorted_log_medians.push_back(median_in_place(first, last));
  }
  sort_ascending(out.sorted_log_medians);
  return out;
}

RatioTest block_bootstrap_ratio_test(const StepBlocks& a, const StepBlocks& b, double log_ratio,
                                     const BootstrapOptions& bootstrap,
                                     const RatioTestOptions& options) {
  if (a.sorted_log_medians.empty() || b.sorted_log_medians.empty()) {
    throw std::invalid_argument("block_bootstrap_ratio_test: a side has no blocks");
  }
  detail::Rng rng(bootstrap.seed);
  std::vector<double> replicates;
  const int resamples = std::max(bootstrap.resamples, 2);
  replicates.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    const double ma = detail::resampled_median(a.sorted_log_medians, rng);
    const double mb = detail::resampled_median(b.sorted_log_medians, rng);
    replicates.push_back(mb - ma);
  }
  const double se = std::sqrt(mean_variance(replicates).variance);
  const auto blocks =
      static_cast<int64_t>(std::min(a.sorted_log_medians.size(), b.sorted_log_medians.size()));
  const double df = static_cast<double>(std::max<int64_t>(blocks - 1, 1));
  RatioTest t = ratio_test_from_log(log_ratio, se, df, options);
  t.n_a = static_cast<int64_t>(a.sorted_log_medians.size());
  t.n_b = static_cast<int64_t>(b.sorted_log_medians.size());
  return t;
}

}  // namespace recompdiag::stats
