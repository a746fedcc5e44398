#pragma once
/// \file
/// Steady memory growth in a series of per-step resident sizes: what the `memory_growth` health
/// rule fires on. Pure and LibTorch-free; fixed memory.
///
///     recompdiag::MemoryTrend trend(recompdiag::MemoryGrowthOptions{});
///     trend.add(step, resident_bytes);  // once per step that has a memory section
///     if (auto growth = trend.steady_growth()) { /* growth->bytes_per_step ... */ }

#include <cstdint>
#include <optional>
#include <vector>

namespace recompdiag {

/// When growth counts as steady. The window is cut into `blocks` consecutive blocks of steps; each
/// block's level is the median of its samples (a spike or a dip in one step does not move it).
/// Growth is steady when every block's level is above the previous block's, and the growth from
/// the first block to the last is at least `min_bytes_per_step` per step and `min_total_bytes` in
/// all. A one-time rise (warm-up, a cache that fills once) raises one block over the previous and
/// then stays flat: it does not fire.
struct MemoryGrowthOptions {
  int64_t window = 120;                    ///< Samples held (the latest); at least `blocks` x 2.
  int64_t blocks = 4;                      ///< At least 2.
  int64_t min_bytes_per_step = 16 * 1024;  ///< Rate of the growth, first to last block.
  int64_t min_total_bytes =
      8 * 1024 * 1024;  ///< Growth from the first block's level to the last's.
};

/// A steady growth found in the window.
struct MemoryGrowth {
  int64_t first_step = 0;     ///< First step of the window.
  int64_t last_step = 0;      ///< Last step of the window.
  int64_t from_bytes = 0;     ///< Level (median) of the first block.
  int64_t to_bytes = 0;       ///< Level of the last block.
  double bytes_per_step = 0;  ///< (to - from) / steps between the two blocks' centres.
};

/// The latest `window` samples of resident bytes, in a ring buffer allocated at construction. Not
/// thread-safe.
class MemoryTrend {
 public:
  explicit MemoryTrend(MemoryGrowthOptions options = {});
  /// Adds the resident size at `step`; steps must increase.
  void add(int64_t step, int64_t bytes);
  /// Forgets every sample.
  void clear();
  /// Samples held (at most the window).
  int64_t size() const { return count_; }
  /// The growth when the window is full and grows steadily; nullopt otherwise.
  std::optional<MemoryGrowth> steady_growth() const;
  const MemoryGrowthOptions& options() const { return options_; }

 private:
  MemoryGrowthOptions options_;
  std::vector<int64_t> bytes_;  // ring buffer
  std::vector<int64_t> steps_;
  mutable std::vector<int64_t> scratch_;
  int64_t next_ = 0;
  int64_t count_ = 0;
};

}  // namespace recompdiag
