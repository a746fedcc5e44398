#pragma once
// A fixed-size, lock-free set of 64-bit signature hashes: "first seen?" for the
// hot path.
//
// Open addressing with linear probing over a power-of-two array of atomics
// allocated once. Insert is a CAS, never a lock, never an allocation. When the
// table is at its load limit, or a probe sequence runs too long, the insert is
// refused and counted as dropped: the caller cannot tell whether that signature
// was new, and says so.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace recompdiag::probes::detail {

/// 64-bit FNV-1a, incremental. Cheap enough for op names and a few shape words.
class Fnv1a {
 public:
  void add_bytes(const void* data, size_t size) {
    auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= p[i];
      hash_ *= 1099511628211ull;
    }
  }
  void add_string(const char* s) {
    for (; *s; ++s) {
      hash_ ^= static_cast<unsigned char>(*s);
      hash_ *= 1099511628211ull;
    }
  }
  // Mixes a whole word at once (for integers: sizes, dtypes, devices).
  void add_word(uint64_t v) {
    hash_ ^= v + 0x9e3779b97f4a7c15ull + (hash_ << 6) + (hash_ >> 2);
    hash_ *= 1099511628211ull;
  }
  uint64_t value() const { return hash_ == 0 ? 1 : hash_; }  // 0 marks an empty slot

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

enum class InsertResult { kNew, kSeen, kDropped };

class SignatureTable {
 public:
  /// `capacity` is rounded up to a power of two; at most 3/4 of it is filled.
  explicit SignatureTable(size_t capacity) {
    size_t cap = 64;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    limit_ = cap / 4 * 3;
    slots_ = std::make_unique<std::atomic<uint64_t>[]>(cap);
    for (size_t i = 0; i < cap; ++i) slots_[i].store(0, std::memory_order_relaxed);
  }

  /// Thread-safe, lock-free, allocation-free.
  InsertResult insert(uint64_t hash) {
    if (hash == 0) hash = 1;
    size_t i = static_cast<size_t>(hash) & mask_;
    for (int probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & mask_) {
      uint64_t cur = slots_[i].load(std::memory_order_relaxed);
      if (cur == hash) return InsertResult::kSeen;
      if (cur != 0) continue;
      if (size_.load(std::memory_order_relaxed) >= limit_) return InsertResult::kDropped;
      uint64_t expected = 0;
      if (slots_[i].compare_exchange_strong(expected, hash, std::memory_order_relaxed)) {
        size_.fetch_add(1, std::memory_order_relaxed);
        return InsertResult::kNew;
      }
      if (expected == hash) return InsertResult::kSeen;
    }
    return InsertResult::kDropped;
  }

  size_t size() const { return size_.load(std::memory_order_relaxed); }
  size_t capacity() const { return mask_ + 1; }

 private:
  static constexpr int kMaxProbe = 32;
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;
  size_t mask_ = 0;
  size_t limit_ = 0;
  std::atomic<size_t> size_{0};
};

}  // namespace recompdiag::probes::detail
