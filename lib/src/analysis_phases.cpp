// Per-phase summary: warm-up detection, step-time statistics with and without warm-up, probe
// counts, steady-state drift and the phase's final loss.
#include <algorithm>
#include <cmath>

#include "detail/analysis_parts.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::detail {

namespace {

constexpr double kSigmaPerMad = 1.4826;

// half of the phase, which is past any warm-up we can detect (warm-up is capped at half).
int64_t detect_warmup(const std::vector<double>& ms, const AnalysisOptions& o, double* threshold) {
  const auto n = static_cast<int64_t>(ms.size());
  *threshold = 0.0;
  if (n < 2) return 0;
  std::vector<double> tail(ms.begin() + n / 2, ms.end());
  stats::sort_ascending(tail);
  const double ref = stats::median_sorted(tail);
  const double spread = stats::mad_sorted(tail) * kSigmaPerMad;
  *threshold = ref + std::max(3.0 * spread, o.warmup_tolerance * ref);
  const auto cap = static_cast<int64_t>(std::floor(o.max_warmup_fraction * static_cast<double>(n)));
  const int64_t window = std::max<int64_t>(o.warmup_window, 1);
  for (int64_t i = 0; i < cap; ++i) {
    if (ms[static_cast<size_t>(i)] > *threshold) continue;
    int64_t above = 0;
    for (int64_t k = i; k < std::min(n, i + window); ++k) {
      if (ms[static_cast<size_t>(k)] > *threshold) ++above;
    }
    if (above <= 1) return i;
  }
  return cap;
}

// Median of n > 0 values sorted ascending, as stats::median() computes it.
double median_of_sorted(const double* sorted, size_t n) {
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace

std::vector<PhaseAnalysis> analyze_phases(const StepColumns& steps, const PhaseSteps& groups,
                                          const EventIndex& events, const AnalysisOptions& o,
                                          std::vector<char>& is_warmup) {
  std::vector<PhaseAnalysis> out;
  for (int phase : groups.order) {
    const StepIndex& idx = groups.by_phase.at(phase);
    PhaseAnalysis pa;
    pa.phase = phase;
    pa.first_step = steps.step(idx.front());
    pa.last_step = steps.step(idx.back());
    std::vector<double> ms;
    ms.reserve(idx.size());
    for (const IndexRange& r : idx.ranges(0, idx.size())) {
      for (size_t i = r.lo; i < r.hi; ++i) ms.push_back(steps.wall_ms(i));
    }
    double threshold = 0.0;
    pa.warmup_steps = detect_warmup(ms, o, &threshold);
    const auto warmup = static_cast<size_t>(pa.warmup_steps);
    // The warm-up's times apart, then the steady ones in step order, reusing `ms`.
    std::vector<double> warmup_ms(ms.begin(), ms.begin() + pa.warmup_steps);
    ms.erase(ms.begin(), ms.begin() + pa.warmup_steps);
    std::vector<double>& steady = ms;
    // Each half sorted on its own gives the halves' medians (the drift); merged, the whole.
    const size_t half = steady.size() / 2;
    stats::sort_ascending(steady.data(), steady.data() + half);
    stats::sort_ascending(steady.data() + half, steady.data() + steady.size());
    if (steady.size() >= 8) {
      const double first = median_of_sorted(steady.data(), half);
      const double second = median_of_sorted(steady.data() + half, steady.size() - half);
      if (first > 0) pa.drift_ratio = second / first;
    }
    std::inplace_merge(steady.begin(), steady.begin() + static_cast<std::ptrdiff_t>(half),
                       steady.end());
    pa.steady = summarize_sorted(steady);
    double extra_ms = 0.0;
    for (size_t k = 0; k < warmup; ++k) {
      extra_ms += warmup_ms[k] - pa.steady.median_ms;
      is_warmup[idx[k]] = 1;
    }
    // Every step, sorted: the sorted warm-up merged into the sorted steady steps.
    stats::sort_ascending(warmup_ms);
    std::vector<double> all(steady.size() + warmup_ms.size());
    std::merge(warmup_ms.begin(), warmup_ms.end(), steady.begin(), steady.end(), all.begin());
    pa.all = summarize_sorted(all);
    pa.steady_sorted_ms = std::move(steady);
    pa.steady_sorted_ms.shrink_to_fit();
    pa.warmup_extra_s = std::max(0.0, extra_ms) / 1000.0;
    for (const IndexRange& r : idx.ranges(0, idx.size())) add_steps(pa.counts, steps, r.lo, r.hi);
    for (const IndexRange& r : idx.ranges(warmup, idx.size()))
      add_steps(pa.steady_counts, steps, r.lo, r.hi);
    pa.counts.compile_events = events.compiles_in(pa.first_step, pa.last_step);
    pa.steady_counts.compile_events =
        events.compiles_in(steps.step(idx[std::min(warmup, idx.size() - 1)]), pa.last_step);
    const size_t last = idx.back();
    pa.final_loss = steps.loss(last);
    pa.final_head_losses.assign(steps.head_losses(last),
                                steps.head_losses(last) + steps.head_count(last));
    out.push_back(std::move(pa));
  }
  return out;
}

}  // namespace recompdiag::detail
