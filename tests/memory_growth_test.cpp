// Steady memory growth: MemoryTrend on synthetic series, and the memory_growth health rule on
// synthetic step records. Deterministic: the series are built, not measured.

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "recompdiag/core/health.h"
#include "recompdiag/core/memory_trend.h"

using namespace recompdiag;

namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kBase = 180 * kMiB;

/// Resident bytes per step: a warm-up rise over the first 20 steps, then `series(step)`, plus a
/// deterministic +-256 KiB wobble (the allocator returning and taking pages).
int64_t resident_at(int64_t step, const std::function<int64_t(int64_t)>& series) {
  const int64_t warmup = step < 20 ? step * 300 * 1024 : 20 * 300 * 1024;
  const int64_t wobble = (step * 7919 % 5 - 2) * 128 * 1024;
  return kBase + warmup + series(step) + wobble;
}

/// Feeds `steps` steps to a HealthMonitor and returns the steps at which memory_growth fired.
std::vector<int64_t> growth_alerts(int64_t steps, const std::function<int64_t(int64_t)>& series,
                                   HealthOptions options = {}) {
  options.repeat_after_steps = 50;
  HealthMonitor health(options);
  std::vector<int64_t> fired;
  for (int64_t i = 0; i < steps; ++i) {
    StepRecord rec;
    rec.step = i;
    rec.wall_ms = 10.0;
    rec.memory = MemoryStats{resident_at(i, series)};
    for (const Alert& a : health.evaluate(rec)) {
      if (a.rule == rules::kMemoryGrowth) fired.push_back(a.step);
    }
  }
  return fired;
}

}  // namespace

TEST_CASE("memory trend: a staircase (a leak per epoch) is steady growth; the figures are its") {
  MemoryGrowthOptions o;
  o.window = 40;
  o.blocks = 4;
  MemoryTrend trend(o);
  // +4 MiB every 10 steps, as the leak fault keeps a unit and an optimizer per epoch.
  for (int64_t i = 0; i < 39; ++i) trend.add(i, kBase + (i / 10) * 4 * kMiB);
  CHECK_FALSE(trend.steady_growth());  // the window is not full yet
  trend.add(39, kBase + 3 * 4 * kMiB);
  const auto g = trend.steady_growth();
  REQUIRE(g);
  CHECK(g->first_step == 0);
  CHECK(g->last_step == 39);
  CHECK(g->from_bytes == kBase);
  CHECK(g->to_bytes == kBase + 12 * kMiB);
  CHECK(g->bytes_per_step == doctest::Approx(12.0 * kMiB / 30.0));  // block centres 4.5 and 34.5
}

TEST_CASE("memory trend: one rise then flat, a flat series, and growth below the rate are not") {
  MemoryGrowthOptions o;
  o.window = 40;
  MemoryTrend jump(o), flat(o), slow(o);
  for (int64_t i = 0; i < 40; ++i) {
    jump.add(i, kBase + (i >= 15 ? 64 * kMiB : 0));
    flat.add(i, kBase + (i % 3) * kMiB);  // noise bigger than any threshold step, no trend
    slow.add(i, kBase + i * 4096);        // steady, but 4 KiB per step
  }
  CHECK_FALSE(jump.steady_growth());
  CHECK_FALSE(flat.steady_growth());
  CHECK_FALSE(slow.steady_growth());
  // The same slow growth passes once the thresholds are that low.
  o.min_bytes_per_step = 1024;
  o.min_total_bytes = 64 * 1024;
  MemoryTrend low(o);
  for (int64_t i = 0; i < 40; ++i) low.add(i, kBase + i * 4096);
  CHECK(low.steady_growth());
}

TEST_CASE("memory_growth: fires on a leak of 0.4 MiB per step, repeated no sooner than allowed") {
  const auto leak = [](int64_t step) { return (step / 10) * 4 * kMiB; };
  const std::vector<int64_t> fired = growth_alerts(300, leak);
  // The default window of 120 steps is full at step 119; then every 50 steps while it grows.
  CHECK(fired == std::vector<int64_t>{119, 169, 219, 269});
}

TEST_CASE("memory_growth: the warm-up rise, a one-time growth and a flat run stay quiet") {
  CHECK(growth_alerts(300, [](int64_t) { return int64_t{0}; }).empty());
  // A cache that fills once at step 150 (+64 MiB) and stays.
  CHECK(growth_alerts(300, [](int64_t s) { return s >= 150 ? 64 * kMiB : int64_t{0}; }).empty());
  // Growth that stops: fires while it lasts, then no more once the window is flat.
  const auto stops = [](int64_t s) { return std::min<int64_t>(s, 140) / 10 * 4 * kMiB; };
  const std::vector<int64_t> fired = growth_alerts(400, stops);
  REQUIRE_FALSE(fired.empty());
  CHECK(fired.back() < 140 + 120);
}

TEST_CASE("memory_growth: a run without the memory section never fires it") {
  HealthMonitor health;
  for (int64_t i = 0; i < 300; ++i) {
    StepRecord rec;
    rec.step = i;
    rec.wall_ms = 10.0;
    for (const Alert& a : health.evaluate(rec)) CHECK(a.rule != rules::kMemoryGrowth);
  }
}

TEST_CASE("memory growth per recompile: a level that rises at each of three recompiles fires") {
  // A compile every 8 steps; each keeps ~4.7 MiB alive (what `--fault leak` measured), far too
  // few steps for the steady trend's window.
  constexpr int64_t kMiB = 1024 * 1024;
  MemoryTrend trend;
  int64_t level = 180 * kMiB;
  std::optional<RecompileGrowth> found;
  int64_t found_at = -1;
  for (int64_t step = 0; step < 40; ++step) {
    if (step % 8 == 0) {
      trend.note_compile(step);
      if (step > 0) level += 4 * kMiB + 700 * 1024;
    }
    trend.add(step, level + (step % 8 < 2 ? 2 * kMiB : 0));  // a transient rise after each
    if (!found) {
      found = trend.recompile_growth();
      if (found) found_at = step;
    }
  }
  REQUIRE(found);
  CHECK(found_at == 32);  // the fifth compile: the levels before 8, 16, 24 and 32 rose thrice
  CHECK(found->recompiles == 3);
  CHECK(found->bytes_per_recompile == doctest::Approx(4.0 * kMiB + 700 * 1024));
  CHECK(found->first_step == 8);
  CHECK(found->last_step == 32);
  CHECK_FALSE(trend.steady_growth());
}

TEST_CASE("memory growth per recompile: a level that settles after a recompile does not fire") {
  constexpr int64_t kMiB = 1024 * 1024;
  MemoryTrend trend;
  for (int64_t step = 0; step < 80; ++step) {
    if (step % 8 == 0) trend.note_compile(step);
    // The first recompile grows the allocator's cache by 6 MiB; later ones reuse it.
    const int64_t level = 180 * kMiB + (step >= 8 ? 6 * kMiB : 0);
    trend.add(step, level + (step % 8 < 2 ? 3 * kMiB : 0));
    CHECK_FALSE(trend.recompile_growth());
  }
}
