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
  const double ref = stats::median(tail);
  const double spread = stats::mad(tail) * kSigmaPerMad;
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

}  // namespace

std::vector<PhaseAnalysis> analyze_phases(const std::vector<StepRecord>& steps,
                                          const PhaseSteps& groups, const EventIndex& events,
                                          const AnalysisOptions& o, std::vector<char>& is_warmup) {
  std::vector<PhaseAnalysis> out;
  for (int phase : groups.order) {
    const std::vector<size_t>& idx = groups.by_phase.at(phase);
    PhaseAnalysis pa;
    pa.phase = phase;
    pa.first_step = steps[idx.front()].step;
    pa.last_step = steps[idx.back()].step;
    std::vector<double> ms;
    ms.reserve(idx.size());
    for (size_t i : idx) ms.push_back(steps[i].wall_ms);
    double threshold = 0.0;
    pa.warmup_steps = detect_warmup(ms, o, &threshold);
    pa.all = summarize(ms);
    std::vector<double> steady(ms.begin() + pa.warmup_steps, ms.end());
    if (steady.size() >= 8) {
      const auto half = static_cast<std::ptrdiff_t>(steady.size() / 2);
      const double first =
          stats::median(std::vector<double>(steady.begin(), steady.begin() + half));
      const double second = stats::median(std::vector<double>(steady.begin() + half, steady.end()));
      if (first > 0) pa.drift_ratio = second / first;
    }
    std::sort(steady.begin(), steady.end());
    pa.steady = summarize_sorted(steady);
    pa.steady_sorted_ms = std::move(steady);
    double extra_ms = 0.0;
    for (int64_t k = 0; k < pa.warmup_steps; ++k) {
      extra_ms += ms[static_cast<size_t>(k)] - pa.steady.median_ms;
      is_warmup[idx[static_cast<size_t>(k)]] = 1;
    }
    pa.warmup_extra_s = std::max(0.0, extra_ms) / 1000.0;
    for (size_t k = 0; k < idx.size(); ++k) {
      add_step(pa.counts, steps[idx[k]]);
      if (static_cast<int64_t>(k) >= pa.warmup_steps) add_step(pa.steady_counts, steps[idx[k]]);
    }
    pa.counts.compile_events = events.compiles_in(pa.first_step, pa.last_step);
    pa.steady_counts.compile_events = events.compiles_in(
        steps[idx[std::min<size_t>(static_cast<size_t>(pa.warmup_steps), idx.size() - 1)]].step,
        pa.last_step);
    const StepRecord& last = steps[idx.back()];
    pa.final_loss = last.loss;
    pa.final_head_losses = last.head_losses;
    out.push_back(std::move(pa));
  }
  return out;
}

}  // namespace recompdiag::detail
