// How training ended, and the per-step chart data (buckets of equal step counts).
#include <algorithm>

#include "detail/analysis_parts.h"

namespace recompdiag::detail {

TrainingOutcome training_outcome(const ColumnarRun& run) {
  TrainingOutcome out;
  out.finished = run.summary && !run.summary->failed();
  for (size_t i = 0; i < run.steps.size() && !out.loss_recorded; ++i) {
    out.loss_recorded = run.steps.loss(i) != 0.0 || run.steps.head_count(i) > 0;
  }
  if (run.summary && !run.summary->final_head_losses.empty()) {
    out.final_loss = run.summary->final_loss;
    out.final_head_losses = run.summary->final_head_losses;
  } else if (!run.steps.empty()) {
    const size_t last = run.steps.size() - 1;
    out.final_loss = run.steps.loss(last);
    out.final_head_losses.assign(run.steps.head_losses(last),
                                 run.steps.head_losses(last) + run.steps.head_count(last));
  }
  return out;
}

std::vector<ChartBucket> chart_data(const StepColumns& steps, const std::vector<char>& is_warmup,
                                    const EventIndex& events, const AnalysisOptions& o) {
  std::vector<ChartBucket> out;
  if (steps.empty()) return out;
  const size_t points = std::max<size_t>(o.chart_points, 1);
  const size_t per = (steps.size() + points - 1) / points;
  for (size_t b = 0; b < steps.size(); b += per) {
    const size_t e = std::min(steps.size(), b + per);
    ChartBucket cb;
    cb.first_step = steps.step(b);
    cb.last_step = steps.step(e - 1);
    cb.phase = steps.phase(b);
    cb.wall_min_ms = steps.wall_ms(b);
    cb.wall_max_ms = steps.wall_ms(b);
    double sum = 0.0;
    for (size_t k = b; k < e; ++k) {
      const double ms = steps.wall_ms(k);
      sum += ms;
      cb.wall_min_ms = std::min(cb.wall_min_ms, ms);
      cb.wall_max_ms = std::max(cb.wall_max_ms, ms);
      if (is_warmup[k]) cb.warmup = true;
    }
    ProbeCounts counts;
    add_steps(counts, steps, b, e);
    cb.compiles = counts.jit_compiles;
    cb.cache_misses = counts.cache_misses();
    cb.compiles = std::max(cb.compiles, events.compiles_in(cb.first_step, cb.last_step));
    cb.wall_mean_ms = sum / static_cast<double>(e - b);
    cb.head_losses = mean_heads(steps, {{b, e}});
    out.push_back(std::move(cb));
  }
  return out;
}

}  // namespace recompdiag::detail
