// How training ended, and the per-step chart data (buckets of equal step counts).
#include <algorithm>

#include "detail/analysis_parts.h"

namespace recompdiag::detail {

TrainingOutcome training_outcome(const RunFile& run) {
  TrainingOutcome out;
  out.finished = run.summary.has_value();
  if (run.summary && !run.summary->final_head_losses.empty()) {
    out.final_loss = run.summary->final_loss;
    out.final_head_losses = run.summary->final_head_losses;
  } else if (!run.steps.empty()) {
    out.final_loss = run.steps.back().loss;
    out.final_head_losses = run.steps.back().head_losses;
  }
  return out;
}

std::vector<ChartBucket> chart_data(const std::vector<StepRecord>& steps,
                                    const std::vector<char>& is_warmup, const EventIndex& events,
                                    const AnalysisOptions& o) {
  std::vector<ChartBucket> out;
  if (steps.empty()) return out;
  const size_t points = std::max<size_t>(o.chart_points, 1);
  const size_t per = (steps.size() + points - 1) / points;
  for (size_t b = 0; b < steps.size(); b += per) {
    const size_t e = std::min(steps.size(), b + per);
    ChartBucket cb;
    cb.first_step = steps[b].step;
    cb.last_step = steps[e - 1].step;
    cb.phase = steps[b].phase;
    cb.wall_min_ms = steps[b].wall_ms;
    cb.wall_max_ms = steps[b].wall_ms;
    double sum = 0.0;
    std::vector<const StepRecord*> in;
    in.reserve(e - b);
    for (size_t k = b; k < e; ++k) {
      const StepRecord& s = steps[k];
      sum += s.wall_ms;
      cb.wall_min_ms = std::min(cb.wall_min_ms, s.wall_ms);
      cb.wall_max_ms = std::max(cb.wall_max_ms, s.wall_ms);
      if (is_warmup[k]) cb.warmup = true;
      if (s.jit) cb.compiles += s.jit->compiles;
      cb.cache_misses += step_cache_misses(s);
      in.push_back(&s);
    }
    cb.compiles = std::max(cb.compiles, events.compiles_in(cb.first_step, cb.last_step));
    cb.wall_mean_ms = sum / static_cast<double>(e - b);
    cb.head_losses = mean_heads(in);
    out.push_back(std::move(cb));
  }
  return out;
}

}  // namespace recompdiag::detail
