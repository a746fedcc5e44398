// The cost of each phase switch (the "recompile tax"): time over the new phase's steady median
// until recovery, compile time reported between steps, probe counts around the switch, and the
// losses on both sides.
#include <algorithm>

#include "detail/analysis_parts.h"

namespace recompdiag::detail {

std::vector<SwitchCost> analyze_switches(const std::vector<StepRecord>& steps,
                                         const std::vector<PhaseAnalysis>& phases,
                                         const PhaseSteps& groups, const EventIndex& events,
                                         const AnalysisOptions& o) {
  std::vector<SwitchCost> out;
  for (size_t p = 1; p < phases.size(); ++p) {
    const PhaseAnalysis& prev = phases[p - 1];
    const PhaseAnalysis& cur = phases[p];
    const std::vector<size_t>& idx = groups.by_phase.at(cur.phase);
    const std::vector<size_t>& prev_idx = groups.by_phase.at(prev.phase);
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
    sc.first_step_ms = steps[idx.front()].wall_ms;
    sc.first_step_ratio = cur.steady.median_ms > 0 ? sc.first_step_ms / cur.steady.median_ms : 0.0;
    const auto before = static_cast<size_t>(std::max<int64_t>(o.switch_window_before, 0));
    const auto after = static_cast<size_t>(std::max(o.switch_window_after, cur.warmup_steps + 1));
    std::vector<const StepRecord*> around;
    for (size_t k = prev_idx.size() - std::min(before, prev_idx.size()); k < prev_idx.size(); ++k) {
      around.push_back(&steps[prev_idx[k]]);
    }
    for (size_t k = 0; k < std::min(after, idx.size()); ++k) around.push_back(&steps[idx[k]]);
    for (const StepRecord* s : around) add_step(sc.around, *s);
    sc.around.compile_events = events.compiles_in(around.front()->step, around.back()->step);

    const auto lw = static_cast<size_t>(std::max<int64_t>(o.loss_window, 1));
    std::vector<const StepRecord*> loss_before;
    std::vector<const StepRecord*> loss_after;
    for (size_t k = prev_idx.size() - std::min(lw, prev_idx.size()); k < prev_idx.size(); ++k) {
      loss_before.push_back(&steps[prev_idx[k]]);
    }
    for (size_t k = 0; k < std::min(lw, idx.size()); ++k) loss_after.push_back(&steps[idx[k]]);
    sc.loss.total_before = mean_loss(loss_before);
    sc.loss.total_after = mean_loss(loss_after);
    sc.loss.head_before = mean_heads(loss_before);
    sc.loss.head_after = mean_heads(loss_after);
    const size_t heads = std::min(sc.loss.head_before.size(), sc.loss.head_after.size());
    for (size_t h = 0; h < heads; ++h)
      sc.loss.head_jump.push_back(sc.loss.head_after[h] - sc.loss.head_before[h]);
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace recompdiag::detail
