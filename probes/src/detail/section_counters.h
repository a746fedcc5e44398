#pragma once
// Counters of one probe section that other threads add to (RecordFunction callbacks, CUPTI's
// buffer thread) and the training thread takes at step end: one relaxed atomic per field of the
// section's table, so the probe names no field list of its own.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "recompdiag/core/record_fields.h"

namespace recompdiag::probes::detail {

// `kSection` is a `Section<S>` constant of record_fields.h. Integer fields count in int64
// atomics, double fields (durations) in double atomics; flags are not counted here. add() is
// wait-free for integers and lock-free for doubles; nothing allocates.
template <class S, const Section<S>& kSection>
class SectionCounters {
  static constexpr std::size_t N = kSection.size;

 public:
  // Adds `n` to the integer field `member` (resolved at compile time).
  template <int64_t S::*kMember>
  void add(int64_t n) {
    constexpr std::size_t i = field_index(kSection, kMember);
    static_assert(i < N, "not a field of this section");
    ints_[i].fetch_add(n, std::memory_order_relaxed);
  }
  // Adds `v` to the double field `member`.
  template <double S::*kMember>
  void add(double v) {
    constexpr std::size_t i = field_index(kSection, kMember);
    static_assert(i < N, "not a field of this section");
    double old = doubles_[i].load(std::memory_order_relaxed);
    while (!doubles_[i].compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
    }
  }
  // Adds every counted field of `delta`.
  void add(const S& delta) {
    for (std::size_t i = 0; i < N; ++i) {
      const auto& member = kSection.fields[i].member;
      if (const auto* m = std::get_if<int64_t S::*>(&member)) {
        if (delta.*(*m) != 0) ints_[i].fetch_add(delta.*(*m), std::memory_order_relaxed);
      } else if (const auto* d = std::get_if<double S::*>(&member)) {
        if (delta.*(*d) != 0.0) {
          double old = doubles_[i].load(std::memory_order_relaxed);
          while (!doubles_[i].compare_exchange_weak(old, old + delta.*(*d),
                                                    std::memory_order_relaxed)) {
          }
        }
      }
    }
  }
  // Writes every counted field into `out` and zeroes the counters.
  void take(S& out) {
    for (std::size_t i = 0; i < N; ++i) {
      const auto& member = kSection.fields[i].member;
      if (const auto* m = std::get_if<int64_t S::*>(&member)) {
        out.*(*m) = ints_[i].exchange(0, std::memory_order_relaxed);
      } else if (const auto* d = std::get_if<double S::*>(&member)) {
        out.*(*d) = doubles_[i].exchange(0.0, std::memory_order_relaxed);
      }
    }
  }
  // Zeroes every counter.
  void reset() {
    S discard{};
    take(discard);
  }

 private:
  std::array<std::atomic<int64_t>, N> ints_{};
  std::array<std::atomic<double>, N> doubles_{};
};

}  // namespace recompdiag::probes::detail
