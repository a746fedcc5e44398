#pragma once
// One bootstrap median of a sorted sample, drawn in O(1); shared by the step-level and the block
// bootstrap.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "detail/random.h"

namespace recompdiag::detail {

/// The median of a resample (n draws with replacement) of `sorted` (size n > 0, ascending),
/// drawn from the order-statistic distribution: the k-th smallest of n uniform indices is
/// Beta(k, n + 1 - k).
inline double resampled_median(const std::vector<double>& sorted, Rng& rng) {
  const int64_t n = static_cast<int64_t>(sorted.size());
  auto at = [&](double u) {
    auto i = static_cast<int64_t>(u * static_cast<double>(n));
    return sorted[static_cast<size_t>(std::clamp<int64_t>(i, 0, n - 1))];
  };
  if (n % 2 == 1) {
    const int64_t k = (n + 1) / 2;
    return at(rng.beta(static_cast<double>(k), static_cast<double>(n + 1 - k)));
  }
  const int64_t k = n / 2;
  const double u_k = rng.beta(static_cast<double>(k), static_cast<double>(n + 1 - k));
  // Given the k-th, the (k+1)-th is the smallest of the n - k uniforms above it: Beta(1, n - k)
  // scaled into (u_k, 1).
  const double v = 1.0 - std::pow(rng.uniform_open(), 1.0 / static_cast<double>(n - k));
  const double u_k1 = u_k + (1.0 - u_k) * v;
  return 0.5 * (at(u_k) + at(u_k1));
}

}  // namespace recompdiag::detail
