#include "recompdiag/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "detail/random.h"
#include "detail/resample.h"
#include "recompdiag/core/error.h"

namespace recompdiag::stats {

void BootstrapOptions::validate() const {
  require_percentage("--confidence", confidence, 0.0, 1.0, true, true);
  require_at_least("--resamples", resamples, 1);
}

void RatioTestOptions::validate() const {
  require_percentage("--threshold", threshold, 0.0, 1.0, false, true);
  require_in_range("--alpha", alpha, 0.0, 1.0, true, true);
  require_in_range("--power", power, 0.0, 1.0, true, true);
  require_percentage("--confidence", confidence, 0.0, 1.0, true, true);
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double median_sorted(const std::vector<double>& sorted) { return quantile_sorted(sorted, 0.5); }

double median_in_place(double* first, double* last) {
  if (first == last) return kNaN;
  const auto n = static_cast<size_t>(last - first);
  double* mid = first + n / 2;
  std::nth_element(first, mid, last);
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  return 0.5 * (*std::max_element(first, mid) + upper);
}

double median(std::vector<double> values) {
  return median_in_place(values.data(), values.data() + values.size());
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  q = std::clamp(q, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, q);
}

double mad(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  const double m = median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - m));
  return median(std::move(dev));
}

double mad_sorted(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n == 0) return kNaN;
  const double m = median_sorted(sorted);
  // Deviations below the median, nearest first, and above it, nearest first: both ascending.
  const size_t split =
      static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), m) - sorted.begin());
  const size_t n_below = split;
  const size_t n_above = n - split;
  auto below = [&](size_t k) { return m - sorted[split - 1 - k]; };
  auto above = [&](size_t k) { return sorted[split + k] - m; };
  // The k-th smallest (from 0) of the two: take i from `below` and k + 1 - i from `above`, with
  // i the first count at which below(i) is no longer smaller than the last taken from `above`.
  auto kth = [&](size_t k) {
    size_t lo = k + 1 > n_above ? k + 1 - n_above : 0;
    size_t hi = std::min(k + 1, n_below);
    while (lo < hi) {
      const size_t i = lo + (hi - lo) / 2;
      if (below(i) < above(k - i)) {
        lo = i + 1;
      } else {
        hi = i;
      }
    }
    const size_t j = k + 1 - lo;
    if (lo == 0) return above(j - 1);
    if (j == 0) return below(lo - 1);
    return std::max(below(lo - 1), above(j - 1));
  };
  if (n % 2 == 1) return kth(n / 2);
  return 0.5 * (kth(n / 2 - 1) + kth(n / 2));
}

MeanVariance mean_variance(const std::vector<double>& values) {
  MeanVariance out;
  out.n = static_cast<int64_t>(values.size());
  if (values.empty()) {
    out.mean = kNaN;
    return out;
  }
  double sum = 0.0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(out.n);
  if (out.n < 2) return out;
  // Second pass over deviations; the compensation term corrects the rounding in the mean.
  double ss = 0.0;
  double comp = 0.0;
  for (double v : values) {
    const double d = v - out.mean;
    ss += d * d;
    comp += d;
  }
  out.variance = (ss - comp * comp / static_cast<double>(out.n)) / static_cast<double>(out.n - 1);
  return out;
}

RatioInterval bootstrap_median_ratio_sorted(const std::vector<double>& sorted_a,
                                            const std::vector<double>& sorted_b,
                                            const BootstrapOptions& options) {
  if (sorted_a.empty() || sorted_b.empty()) {
    throw std::invalid_argument("bootstrap_median_ratio: empty sample");
  }
  RatioInterval out;
  out.confidence = options.confidence;
  out.resamples = std::max(options.resamples, 1);
  out.ratio = median_sorted(sorted_b) / median_sorted(sorted_a);
  detail::Rng rng(options.seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(out.resamples));
  for (int r = 0; r < out.resamples; ++r) {
    const double ma = detail::resampled_median(sorted_a, rng);
    const double mb = detail::resampled_median(sorted_b, rng);
    ratios.push_back(mb / ma);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  out.low = quantile_sorted(ratios, tail);
  out.high = quantile_sorted(ratios, 1.0 - tail);
  return out;
}

RatioInterval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                     const BootstrapOptions& options) {
  std::vector<double> sa = a;
  std::vector<double> sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return bootstrap_median_ratio_sorted(sa, sb, options);
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

MannWhitneyResult mann_whitney_u_sorted(const std::vector<double>& sorted_a,
                                        const std::vector<double>& sorted_b, int64_t min_samples) {
  MannWhitneyResult out;
  out.n_a = static_cast<int64_t>(sorted_a.size());
  out.n_b = static_cast<int64_t>(sorted_b.size());
  if (out.n_a < min_samples || out.n_b < min_samples) {
    out.too_few_samples = true;
    out.warning = "Mann-Whitney U on " + std::to_string(out.n_a) + " and " +
                  std::to_string(out.n_b) + " samples (fewer than " + std::to_string(min_samples) +
                  "): the p-value is approximate";
  }
  if (out.n_a == 0 || out.n_b == 0) return out;

  // Merge the two sorted samples, giving each tie group its average rank.
  const double n_total = static_cast<double>(out.n_a + out.n_b);
  double rank_sum_a = 0.0;
  double tie_term = 0.0;  // sum of t^3 - t over tie groups
  size_t i = 0;
  size_t j = 0;
  double next_rank = 1.0;
  while (i < sorted_a.size() || j < sorted_b.size()) {
    double v;
    if (j >= sorted_b.size() || (i < sorted_a.size() && sorted_a[i] <= sorted_b[j])) {
      v = sorted_a[i];
    } else {
      v = sorted_b[j];
    }
    size_t count_a = 0;
    size_t count_b = 0;
    while (i < sorted_a.size() && sorted_a[i] == v) ++i, ++count_a;
    while (j < sorted_b.size() && sorted_b[j] == v) ++j, ++count_b;
    const double t = static_cast<double>(count_a + count_b);
    const double avg_rank = next_rank + (t - 1.0) / 2.0;
    rank_sum_a += avg_rank * static_cast<double>(count_a);
    tie_term += t * t * t - t;
    next_rank += t;
  }
  const double na = static_cast<double>(out.n_a);
  const double nb = static_cast<double>(out.n_b);
  out.u_a = rank_sum_a - na * (na + 1.0) / 2.0;
  out.u_b = na * nb - out.u_a;
  const double mu = na * nb / 2.0;
  const double var = na * nb / 12.0 * ((n_total + 1.0) - tie_term / (n_total * (n_total - 1.0)));
  if (!(var > 0.0)) {  // every value tied: no evidence either way
    out.z = 0.0;
    out.p = 1.0;
    return out;
  }
  double d = out.u_b - mu;
  d = std::copysign(std::max(std::fabs(d) - 0.5, 0.0), d);
  out.z = d / std::sqrt(var);
  out.p = std::min(1.0, 2.0 * normal_upper_tail(std::fabs(out.z)));
  return out;
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t min_samples) {
  std::vector<double> sa = a;
  std::vector<double> sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return mann_whitney_u_sorted(sa, sb, min_samples);
}

}  // namespace recompdiag::stats
