// The cost of each phase switch (the "recompile tax"): time over the new phase's steady median
// until recovery, compile time reported between steps, probe counts around the switch, and the
// losses on both sides.
#include <algorithm>

#include "detail/analysis_parts.h"

namespace recompdiag::detail {

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
