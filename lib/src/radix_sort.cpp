// stats::sort_ascending(): a least-significant-digit radix sort of doubles by their bits, for the
// step times of long phases, where std::sort was a third of an analysis (issue 12).
#include <algorithm>
#include <array>
#include <cstring>

#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

namespace {

constexpr int kDigitBits = 11;
constexpr size_t kBuckets = size_t{1} << kDigitBits;
constexpr int kPasses = (64 + kDigitBits - 1) / kDigitBits;
constexpr uint64_t kSign = uint64_t{1} << 63;
// Below this, std::sort is as fast and needs no second buffer.
constexpr size_t kRadixMin = 4096;

// A double's bits as an unsigned key that orders as the doubles do: positives above negatives,
// negatives in reverse. -0.0 sorts just below +0.0; NaNs go to the ends, by their sign bit.
uint64_t key_of(double v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  return (u & kSign) ? ~u : (u | kSign);
}

double value_of(uint64_t key) {
  const uint64_t u = (key & kSign) ? (key & ~kSign) : ~key;
  double v = 0.0;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

}  // namespace

void sort_ascending(double* values, double* last) {
  const auto n = static_cast<size_t>(last - values);
  if (n < kRadixMin) {
    std::sort(values, last);
    return;
  }
  std::vector<uint64_t> keys(n);
  std::vector<uint64_t> spare(n);
  // Every pass's digit counts in one read of the keys.
  std::vector<std::array<size_t, kBuckets>> counts(kPasses);
  for (auto& c : counts) c.fill(0);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = key_of(values[i]);
    keys[i] = k;
    for (int p = 0; p < kPasses; ++p) ++counts[p][(k >> (p * kDigitBits)) & (kBuckets - 1)];
  }
  for (int p = 0; p < kPasses; ++p) {
    const int shift = p * kDigitBits;
    auto& c = counts[p];
    // A digit every key shares (the exponent of step times that stay within a power of two)
    // leaves the order as it is: skip its pass.
    if (c[(keys[0] >> shift) & (kBuckets - 1)] == n) continue;
    size_t at = 0;
    for (size_t& slot : c) {
      const size_t count = slot;
      slot = at;
      at += count;
    }
    for (size_t i = 0; i < n; ++i) spare[c[(keys[i] >> shift) & (kBuckets - 1)]++] = keys[i];
    keys.swap(spare);
  }
  for (size_t i = 0; i < n; ++i) values[i] = value_of(keys[i]);
}

}  // namespace recompdiag::stats
