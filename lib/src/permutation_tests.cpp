// Exact permutation and sign-flip tests of a few runs' log medians: the p that the arrangement of
// the values alone gives, for runs as the unit when the machine puts their medians on levels.

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

namespace {

constexpr double kSplitLimit = 100000.0;
constexpr size_t kFlipLimit = 16;
// Ties in floating point: an arrangement as extreme as the observed one within rounding counts.
constexpr double kTolerance = 1e-12;

double binomial(size_t n, size_t k) {
  double c = 1.0;
  for (size_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

}  // namespace

PermutationP permutation_test(const std::vector<double>& a, const std::vector<double>& b) {
  PermutationP out;
  const size_t na = a.size();
  const size_t n = na + b.size();
  if (na == 0 || b.empty()) return out;
  const double splits = binomial(n, na);
  if (splits > kSplitLimit) {
    out.exact = false;
    out.p = out.min_p = 0.0;
    return out;
  }
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double total = std::accumulate(pooled.begin(), pooled.end(), 0.0);
  auto difference = [&](double sum_a) {
    return (total - sum_a) / static_cast<double>(b.size()) - sum_a / static_cast<double>(na);
  };
  const double observed = std::fabs(difference(std::accumulate(a.begin(), a.end(), 0.0)));
  // Every subset of size na, as a bitmask walked in lexicographic order (Gosper's hack).
  int64_t as_extreme = 0;
  int64_t count = 0;
  for (uint64_t mask = (uint64_t{1} << na) - 1; mask < (uint64_t{1} << n);) {
    double sum_a = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (mask >> i & 1U) sum_a += pooled[i];
    }
    as_extreme += std::fabs(difference(sum_a)) >= observed - kTolerance;
    ++count;
    const uint64_t low = mask & (~mask + 1);
    const uint64_t ripple = mask + low;
    mask = (((ripple ^ mask) >> 2) / low) | ripple;
  }
  out.p = static_cast<double>(as_extreme) / static_cast<double>(count);
  out.min_p = std::min(1.0, 2.0 / splits);
  return out;
}

PermutationP sign_flip_test(const std::vector<double>& d) {
  PermutationP out;
  const size_t n = d.size();
  if (n == 0) return out;
  if (n > kFlipLimit) {
    out.exact = false;
    out.p = out.min_p = 0.0;
    return out;
  }
  const double observed = std::fabs(std::accumulate(d.begin(), d.end(), 0.0));
  int64_t as_extreme = 0;
  const uint64_t flips = uint64_t{1} << n;
  for (uint64_t mask = 0; mask < flips; ++mask) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += mask >> i & 1U ? -d[i] : d[i];
    as_extreme += std::fabs(sum) >= observed - kTolerance;
  }
  out.p = static_cast<double>(as_extreme) / static_cast<double>(flips);
  out.min_p = std::min(1.0, 2.0 / static_cast<double>(flips));
  return out;
}

}  // namespace recompdiag::stats
