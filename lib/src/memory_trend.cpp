#include "recompdiag/core/memory_trend.h"

#include <algorithm>
#include <string>

#include "recompdiag/core/error.h"

namespace recompdiag {

void MemoryGrowthOptions::validate(const std::string& prefix) const {
  auto at_least = [&](const char* name, int64_t value, int64_t low) {
    require_at_least(prefix + name, value, low);
  };
  at_least("blocks", blocks, 2);
  at_least("window", window, 2 * blocks);
  at_least("min_bytes_per_step", min_bytes_per_step, 0);
  at_least("min_total_bytes", min_total_bytes, 0);
  at_least("min_bytes_per_recompile", min_bytes_per_recompile, 0);
  at_least("recompiles", recompiles, 1);
  if (recompiles > MemoryTrend::kMaxRecompiles) {
    throw InputError(prefix +
                     "recompiles must be <= " + std::to_string(MemoryTrend::kMaxRecompiles) +
                     ", got " + std::to_string(recompiles));
  }
}

MemoryTrend::MemoryTrend(MemoryGrowthOptions options) : options_(options) {
  options_.blocks = std::max<int64_t>(2, options_.blocks);
  options_.window = std::max<int64_t>(options_.window, 2 * options_.blocks);
  bytes_.assign(static_cast<size_t>(options_.window), 0);
  steps_.assign(static_cast<size_t>(options_.window), 0);
  scratch_.reserve(bytes_.size());
}

void MemoryTrend::add(int64_t step, int64_t bytes) {
  bytes_[static_cast<size_t>(next_)] = bytes;
  steps_[static_cast<size_t>(next_)] = step;
  next_ = (next_ + 1) % options_.window;
  count_ = std::min(count_ + 1, options_.window);
}

void MemoryTrend::clear() {
  next_ = 0;
  count_ = 0;
  compiles_held_ = 0;
}

void MemoryTrend::note_compile(int64_t step) {
  if (count_ == 0) return;  // the first compile: nothing settled before it
  const int64_t latest =
      bytes_[static_cast<size_t>((next_ + options_.window - 1) % options_.window)];
  if (compiles_held_ == kMaxRecompiles + 1) {
    std::rotate(compile_levels_.begin(), compile_levels_.begin() + 1, compile_levels_.end());
    std::rotate(compile_steps_.begin(), compile_steps_.begin() + 1, compile_steps_.end());
    --compiles_held_;
  }
  compile_levels_[static_cast<size_t>(compiles_held_)] = latest;
  compile_steps_[static_cast<size_t>(compiles_held_)] = step;
  ++compiles_held_;
}

std::optional<RecompileGrowth> MemoryTrend::recompile_growth() const {
  const int64_t n = std::clamp<int64_t>(options_.recompiles, 1, kMaxRecompiles);
  if (compiles_held_ < n + 1) return std::nullopt;
  const int64_t first = compiles_held_ - n - 1;
  for (int64_t k = first + 1; k < compiles_held_; ++k) {
    const int64_t rise = compile_levels_[static_cast<size_t>(k)] -
                         compile_levels_[static_cast<size_t>(k - 1)];
    if (rise < options_.min_bytes_per_recompile) return std::nullopt;
  }
  RecompileGrowth g;
  g.recompiles = n;
  g.from_bytes = compile_levels_[static_cast<size_t>(first)];
  g.to_bytes = compile_levels_[static_cast<size_t>(compiles_held_ - 1)];
  g.first_step = compile_steps_[static_cast<size_t>(first)];
  g.last_step = compile_steps_[static_cast<size_t>(compiles_held_ - 1)];
  g.bytes_per_recompile = static_cast<double>(g.to_bytes - g.from_bytes) / static_cast<double>(n);
  if (g.to_bytes - g.from_bytes < options_.min_total_bytes) return std::nullopt;
  return g;
}

std::optional<MemoryGrowth> MemoryTrend::steady_growth() const {
  if (count_ < options_.window) return std::nullopt;
  // The window is full: the oldest sample is at next_.
  const auto at = [&](int64_t i) { return static_cast<size_t>((next_ + i) % options_.window); };
  const int64_t n = options_.window;
  const int64_t blocks = options_.blocks;
  int64_t previous = 0;
  MemoryGrowth growth;
  double first_centre = 0, last_centre = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * n / blocks;
    const int64_t end = (b + 1) * n / blocks;
    scratch_.clear();
    for (int64_t i = begin; i < end; ++i) scratch_.push_back(bytes_[at(i)]);
    const auto mid = scratch_.begin() + static_cast<std::ptrdiff_t>(scratch_.size() / 2);
    std::nth_element(scratch_.begin(), mid, scratch_.end());
    const int64_t level = *mid;
    if (b > 0 && level <= previous)
      return std::nullopt;  // not above the previous block: not steady
    previous = level;
    const double centre = 0.5 * static_cast<double>(steps_[at(begin)] + steps_[at(end - 1)]);
    if (b == 0) {
      growth.from_bytes = level;
      first_centre = centre;
    }
    growth.to_bytes = level;
    last_centre = centre;
  }
  growth.first_step = steps_[at(0)];
  growth.last_step = steps_[at(n - 1)];
  const int64_t total = growth.to_bytes - growth.from_bytes;
  growth.bytes_per_step = static_cast<double>(total) / std::max(1.0, last_centre - first_centre);
  if (total < options_.min_total_bytes ||
      growth.bytes_per_step < static_cast<double>(options_.min_bytes_per_step)) {
    return std::nullopt;
  }
  return growth;
}

}  // namespace recompdiag
