// Slow stretches: warm-up steps and steps over slow_factor x their phase's steady median, merged
// across gaps of up to stretch_gap ordinary steps. A recompile's cost is often spread (profiling
// run, then plan build); merging keeps its causes in one sentence.
#include <algorithm>
#include <map>
#include <set>

#include "detail/analysis_parts.h"
#include "detail/attribution.h"

namespace recompdiag::detail {

std::vector<SlowStretch> find_slow_stretches(const ColumnarRun& run,
                                             const std::vector<PhaseAnalysis>& phases,
                                             const std::vector<char>& is_warmup,
                                             const EventIndex& events, const AnalysisOptions& o,
                                             int64_t* found) {
  const StepColumns& steps = run.steps;
  const std::string optimizer = optimizer_name(run.header);
  std::vector<SlowStretch> stretches;
  std::map<int, const PhaseAnalysis*> phase_of;
  for (const auto& pa : phases) phase_of[pa.phase] = &pa;
  // Phases change rarely: remember the last one looked up instead of a map lookup per step.
  int cached_phase = phases.empty() ? 0 : phases[0].phase;
  const PhaseAnalysis* cached = phases.empty() ? nullptr : &phases[0];
  auto phase_analysis = [&](int phase) {
    if (phase != cached_phase) {
      cached_phase = phase;
      cached = phase_of[phase];
    }
    return cached;
  };
  // The first step of every phase after the first starts a stretch even when it is not slow:
  // the switch is always shown with what coincides with it.
  PackedColumn::Reader phase_at(steps.phase_column());
  auto starts_phase = [&](size_t k) {
    return k > 0 && phase_at(k) != phase_at(k - 1) && phase_at(k) != phases[0].phase;
  };
  auto is_slow = [&](size_t k) {
    const double ref = phase_analysis(static_cast<int>(phase_at(k)))->steady.median_ms;
    return ref > 0 && (is_warmup[k] || starts_phase(k) || steps.wall_ms(k) > o.slow_factor * ref);
  };
  const auto gap = static_cast<size_t>(std::max<int64_t>(o.stretch_gap, 0));
  size_t i = 0;
  while (i < steps.size()) {
    if (!is_slow(i)) {
      ++i;
      continue;
    }
    const PhaseAnalysis* pa = phase_analysis(steps.phase(i));
    const double ref = pa->steady.median_ms;
    size_t j = i;
    for (size_t next = j + 1;
         next < steps.size() && next <= j + gap + 1 && phase_at(next) == phase_at(i); ++next) {
      if (is_slow(next)) j = next;
    }
    SlowStretch s;
    s.first_step = steps.step(i);
    s.last_step = steps.step(j);
    s.phase = steps.phase(i);
    ProbeCounts c;
    add_steps(c, steps, i, j + 1);
    double sum_ms = 0.0;
    for (size_t k = i; k <= j; ++k) {
      sum_ms += steps.wall_ms(k);
      s.max_ratio = std::max(s.max_ratio, steps.wall_ms(k) / ref);
    }
    const auto n = static_cast<double>(j - i + 1);
    s.mean_ratio = sum_ms / n / ref;
    s.extra_s = (sum_ms - n * ref) / 1000.0;
    // An event's step is the step it precedes, so the stretch's own range holds its causes.
    std::vector<const EventRecord*> evs = events.in(s.first_step, s.last_step);
    s.signals = rank_signals(c, pa->steady_counts, evs, optimizer);
    // Warm-up steps belong to a stretch even when fast; a stretch that cost nothing is no slow
    // stretch, except at a switch, which is always shown with what coincides with it.
    if (s.extra_s > 0.0 || starts_phase(i)) stretches.push_back(std::move(s));
    i = j + 1;
  }
  *found = static_cast<int64_t>(stretches.size());
  if (stretches.size() > o.max_slow_stretches) {
    std::set<int64_t> switch_steps;
    for (size_t p = 1; p < phases.size(); ++p) switch_steps.insert(phases[p].first_step);
    // Switch stretches first, then the costliest: the switch is kept even when noise costs more.
    std::stable_sort(stretches.begin(), stretches.end(),
                     [&](const SlowStretch& x, const SlowStretch& y) {
                       const bool sx = switch_steps.count(x.first_step) > 0;
                       const bool sy = switch_steps.count(y.first_step) > 0;
                       if (sx != sy) return sx;
                       return x.extra_s > y.extra_s;
                     });
    stretches.resize(o.max_slow_stretches);
    std::sort(stretches.begin(), stretches.end(), [](const SlowStretch& x, const SlowStretch& y) {
      return x.first_step < y.first_step;
    });
  }
  return stretches;
}

}  // namespace recompdiag::detail
