// The cost of each phase switch (the "recompile tax"): time over the new phase's steady median
// until recovery, compile time reported between steps, probe counts around the switch, and the
// losses on both sides.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "detail/analysis_parts.h"
#include "recompdiag/core/probe_counts.h"

namespace recompdiag::detail {

namespace {

// The fewest steady windows whose sums say what noise adds.
constexpr size_t kMinNoiseWindows = 20;

// The 2.5% and 97.5% quantiles of sum(t - median) over every window of `k` consecutive steps of
// `steady` (ms, in step order), in seconds; {0, 0} with fewer than kMinNoiseWindows windows.
std::pair<double, double> window_noise_s(const std::vector<double>& steady, double median_ms,
                                         size_t k) {
  if (k == 0 || steady.size() < k + kMinNoiseWindows - 1) return {0.0, 0.0};
  std::vector<double> sums;
  double sum = 0.0;
  for (size_t i = 0; i < steady.size(); ++i) {
    sum += steady[i] - median_ms;
    if (i >= k) sum -= steady[i - k] - median_ms;
    if (i + 1 >= k) sums.push_back(sum);
  }
  // Step times near the double's limit overflow a sum: such a run says nothing about its noise.
  for (double x : sums) {
    if (!std::isfinite(x)) return {0.0, 0.0};
  }
  std::sort(sums.begin(), sums.end());
  auto at = [&](double q) {
    return sums[static_cast<size_t>(q * static_cast<double>(sums.size() - 1) + 0.5)] / 1000.0;
  };
  return {at(0.025), at(0.975)};
}

}  // namespace

std::vector<SwitchCost> analyze_switches(const StepColumns& steps,
                                         const std::vector<PhaseAnalysis>& phases,
                                         const PhaseSteps& groups, const EventIndex& events,
                                         const AnalysisOptions& o) {
  std::vector<SwitchCost> out;
  for (size_t p = 1; p < phases.size(); ++p) {
    const PhaseAnalysis& prev = phases[p - 1];
    const PhaseAnalysis& cur = phases[p];
    const StepIndex& idx = groups.by_phase.at(cur.phase);
    const StepIndex& prev_idx = groups.by_phase.at(prev.phase);
    SwitchCost sc;
    sc.from_phase = prev.phase;
    sc.to_phase = cur.phase;
    sc.switch_step = cur.first_step;
    sc.extra_s = cur.warmup_extra_s;
    for (const EventRecord* e : events.in(prev.last_step + 1, cur.first_step)) {
      if (e->kind == EventKind::kCompile && e->detail.is_object() &&
          e->detail.contains("compile_ms") && e->detail["compile_ms"].is_number()) {
        sc.compile_s += e->detail["compile_ms"].get<double>() / 1000.0;
      }
    }
    sc.tax_s = sc.extra_s + sc.compile_s;
    sc.recovery_steps = cur.warmup_steps;
    sc.first_step_ms = steps.wall_ms(idx.front());
    sc.first_step_ratio = cur.steady.median_ms > 0 ? sc.first_step_ms / cur.steady.median_ms : 0.0;
    const auto before = static_cast<size_t>(std::max<int64_t>(o.switch_window_before, 0));
    const auto after = static_cast<size_t>(std::max(o.switch_window_after, cur.warmup_steps + 1));
    // The last `n` steps of the previous phase and the first `m` of this one.
    auto window = [&](size_t n, size_t m) {
      std::vector<IndexRange> r =
          prev_idx.ranges(prev_idx.size() - std::min(n, prev_idx.size()), prev_idx.size());
      for (const IndexRange& x : idx.ranges(0, std::min(m, idx.size()))) r.push_back(x);
      return r;
    };
    const std::vector<IndexRange> around = window(before, after);
    for (const IndexRange& r : around) add_steps(sc.around, steps, r.lo, r.hi);
    sc.around.compile_events =
        events.compiles_in(steps.step(around.front().lo), steps.step(around.back().hi - 1));
    const ProbeCounts& c = sc.around;
    sc.signal = c.compile_events > 0 || umbrella_total(c, kCompilesUmbrella) > 0 ||
                umbrella_total(c, kCacheMissesUmbrella) > 0 || c.optimizer_resets > 0 ||
                sc.compile_s > 0.0;
    std::vector<double> steady;
    for (const IndexRange& r : idx.ranges(static_cast<size_t>(cur.warmup_steps), idx.size())) {
      for (size_t i = r.lo; i < r.hi; ++i) steady.push_back(steps.wall_ms(i));
    }
    std::tie(sc.noise_low_s, sc.noise_high_s) = window_noise_s(
        steady, cur.steady.median_ms, static_cast<size_t>(std::max<int64_t>(0, cur.warmup_steps)));
    if (!sc.signal && sc.recovery_steps > 0 && sc.noise_high_s > 0.0 &&
        sc.extra_s <= sc.noise_high_s) {
      sc.noise_explained = true;
      sc.tax_s = sc.compile_s;
      sc.recovery_steps = 0;
    }

    const auto lw = static_cast<size_t>(std::max<int64_t>(o.loss_window, 1));
    const std::vector<IndexRange> loss_before = window(lw, 0);
    const std::vector<IndexRange> loss_after = window(0, lw);
    sc.loss.total_before = mean_loss(steps, loss_before);
    sc.loss.total_after = mean_loss(steps, loss_after);
    sc.loss.head_before = mean_heads(steps, loss_before);
    sc.loss.head_after = mean_heads(steps, loss_after);
    const size_t heads = std::min(sc.loss.head_before.size(), sc.loss.head_after.size());
    for (size_t h = 0; h < heads; ++h)
      sc.loss.head_jump.push_back(sc.loss.head_after[h] - sc.loss.head_before[h]);
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace recompdiag::detail
