#pragma once
/// \file
/// Steady memory growth in a series of per-step resident sizes: what the `memory_growth` health
/// rule fires on. Pure and LibTorch-free; fixed memory.
///
///     recompdiag::MemoryTrend trend(recompdiag::MemoryGrowthOptions{});
///     trend.add(step, resident_bytes);  // once per step that has a memory section
///     if (auto growth = trend.steady_growth()) { /* growth->bytes_per_step ... */ }

#include <array>
#include <cstdint>
#include <optional>
#include <string>
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
  /// Growth per recompile: the resident level just before each compile (what the previous
  /// compiled step settled at) higher by at least this much than before the compile before, at
  /// each of `recompiles` recompiles in a row, by min_total_bytes in all. A leak that each
  /// recompile adds to shows after a few recompiles, however few steps lie between them.
  int64_t min_bytes_per_recompile = 1024 * 1024;
  int64_t recompiles = 3;  ///< In [1, MemoryTrend::kMaxRecompiles].

  /// Throws InputError with one sentence for the first field out of its range (named as
  /// `prefix` + field). MemoryTrend itself clamps what it is given, as before 0.7.
  void validate(const std::string& prefix = "memory_growth.") const;
};

/// Resident memory that rose at each of several recompiles in a row and stayed.
struct RecompileGrowth {
  int64_t recompiles = 0;       ///< Recompiles in the run of rises.
  int64_t from_bytes = 0;       ///< Level before the first of them.
  int64_t to_bytes = 0;         ///< Level before the latest compile.
  int64_t first_step = 0;       ///< Step of the first of them.
  int64_t last_step = 0;        ///< Step of the latest compile.
  double bytes_per_recompile = 0.0;
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
  /// Marks that the step about to be add()ed carries a compile: the latest sample is the level
  /// the previous compiled step settled at. Allocation-free.
  void note_compile(int64_t step);
  /// The growth when the level before each of the latest `recompiles` compiles rose past the one
  /// before (MemoryGrowthOptions::min_bytes_per_recompile, min_total_bytes); nullopt otherwise.
  std::optional<RecompileGrowth> recompile_growth() const;
  /// The most recompiles recompile_growth() can look back over.
  static constexpr int64_t kMaxRecompiles = 8;
  const MemoryGrowthOptions& options() const { return options_; }

 private:
  MemoryGrowthOptions options_;
  std::vector<int64_t> bytes_;  // ring buffer
  std::vector<int64_t> steps_;
  mutable std::vector<int64_t> scratch_;
  int64_t next_ = 0;
  int64_t count_ = 0;
  // Levels before the latest compiles (oldest first) and their steps: kMaxRecompiles + 1 held.
  std::array<int64_t, kMaxRecompiles + 1> compile_levels_{};
  std::array<int64_t, kMaxRecompiles + 1> compile_steps_{};
  int64_t compiles_held_ = 0;
};

}  // namespace recompdiag
