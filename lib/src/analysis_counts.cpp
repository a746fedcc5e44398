// Step-time summaries, probe counts and loss means over sets of steps; the run's events by step.
#include <algorithm>
#include <cmath>

#include "detail/analysis_parts.h"
#include "recompdiag/core/health.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::detail {

namespace {

// Quantile q of `v` by selection (type 7, as stats::quantile), reordering v: O(n), no sort.
double quantile_select(std::vector<double>& v, double q) {
  const double h = static_cast<double>(v.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double x_lo = v[lo];
  if (lo + 1 >= v.size()) return x_lo;
  const double x_hi = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

}  // namespace

void add_step(ProbeCounts& c, const StepRecord& s) {
  ++c.steps;
  c.sections.add(s);
  if (s.jit) {
    c.has_jit = true;
    c.jit_compiles += s.jit->compiles;
    c.jit_plan_builds += s.jit->plan_builds;
    c.jit_profiling_runs += s.jit->profiling_runs;
  }
  if (s.dispatch && s.dispatch->sampled) {
    const DispatchStats& d = *s.dispatch;
    c.has_dispatch = true;
    c.new_signatures += d.new_signatures;
    c.host_ops += d.host_ops;
    c.copies += d.copies_h2d + d.copies_d2h + d.copies_d2d;
    c.copy_bytes += d.bytes_h2d + d.bytes_d2h + d.bytes_d2d;
    c.syncs += d.syncs;
  }
  if (s.cupti) {
    c.has_cupti = true;
    c.new_kernels += s.cupti->new_kernels;
    c.module_loads += s.cupti->module_loads;
    c.graph_instantiations += s.cupti->graph_instantiations;
  }
  if (s.optimizer) {
    c.has_optimizer = true;
    if (s.optimizer->state_reset) ++c.optimizer_resets;
    c.optimizer_state_off_device =
        std::max(c.optimizer_state_off_device, s.optimizer->state_off_device);
    c.optimizer_state_missing = std::max(c.optimizer_state_missing, s.optimizer->state_missing);
    c.optimizer_state_dtype_mismatch =
        std::max(c.optimizer_state_dtype_mismatch, s.optimizer->state_dtype_mismatch);
    const OptimizerStats& o = *s.optimizer;
    // The health rule's test: a requested lr that the param groups do not hold.
    if (o.lr_requested > 0.0 &&
        std::abs(o.lr_effective - o.lr_requested) > 1e-6 * std::abs(o.lr_requested)) {
      ++c.lr_not_in_effect;
      c.lr_requested = o.lr_requested;
      c.lr_effective = o.lr_effective;
    }
  }
  c.alerts += static_cast<int64_t>(s.alerts.size());
  for (const std::string& rule : s.alerts) {
    if (rule == rules::kSlowStep) ++c.slow_step_alerts;
    if (rule == rules::kMemoryGrowth) ++c.memory_growth_alerts;
  }
  if (s.memory) {
    if (!c.has_memory) c.resident_first_bytes = s.memory->resident_bytes;
    c.has_memory = true;
    c.resident_last_bytes = s.memory->resident_bytes;
  }
}

// Summary of step times already sorted ascending.
StepTimeSummary summarize_sorted(const std::vector<double>& sorted) {
  StepTimeSummary out;
  out.n = static_cast<int64_t>(sorted.size());
  if (sorted.empty()) return out;
  const stats::MeanVariance mv = stats::mean_variance(sorted);
  out.mean_ms = mv.mean;
  out.stddev_ms = std::sqrt(mv.variance);
  out.total_s = mv.mean * static_cast<double>(mv.n) / 1000.0;
  out.min_ms = sorted.front();
  out.max_ms = sorted.back();
  out.median_ms = stats::median_sorted(sorted);
  out.p95_ms = stats::quantile_sorted(sorted, 0.95);
  std::vector<double> dev;
  dev.reserve(sorted.size());
  for (double v : sorted) dev.push_back(std::fabs(v - out.median_ms));
  out.mad_ms = stats::median(std::move(dev));
  return out;
}

// Summary of unsorted step times; selection instead of a sort keeps a million-step phase cheap.
StepTimeSummary summarize(std::vector<double> ms) {
  StepTimeSummary out;
  out.n = static_cast<int64_t>(ms.size());
  if (ms.empty()) return out;
  const stats::MeanVariance mv = stats::mean_variance(ms);
  out.mean_ms = mv.mean;
  out.stddev_ms = std::sqrt(mv.variance);
  out.total_s = mv.mean * static_cast<double>(mv.n) / 1000.0;
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  out.min_ms = *lo;
  out.max_ms = *hi;
  out.p95_ms = quantile_select(ms, 0.95);
  out.median_ms = quantile_select(ms, 0.5);
  for (double& v : ms) v = std::fabs(v - out.median_ms);
  out.mad_ms = stats::median(std::move(ms));
  return out;
}

// Cache misses of one step (see ProbeCounts::cache_misses), without building a ProbeCounts.
int64_t step_cache_misses(const StepRecord& s) {
  int64_t n = 0;
  if (s.jit) n += s.jit->plan_builds;
  if (s.dispatch && s.dispatch->sampled) n += s.dispatch->new_signatures;
  if (s.cupti) n += s.cupti->new_kernels + s.cupti->module_loads + s.cupti->graph_instantiations;
  return n;
}

// Mean unweighted loss per head; a head's non-finite values are left out.
std::vector<double> mean_heads(const std::vector<const StepRecord*>& steps) {
  std::vector<double> sum;
  std::vector<int64_t> count;
  for (const StepRecord* s : steps) {
    if (s->head_losses.size() > sum.size()) {
      sum.resize(s->head_losses.size(), 0.0);
      count.resize(s->head_losses.size(), 0);
    }
    for (size_t h = 0; h < s->head_losses.size(); ++h) {
      if (std::isfinite(s->head_losses[h])) {
        sum[h] += s->head_losses[h];
        ++count[h];
      }
    }
  }
  for (size_t h = 0; h < sum.size(); ++h) {
    sum[h] = count[h] ? sum[h] / static_cast<double>(count[h]) : std::nan("");
  }
  return sum;
}

double mean_loss(const std::vector<const StepRecord*>& steps) {
  double sum = 0.0;
  int64_t n = 0;
  for (const StepRecord* s : steps) {
    if (std::isfinite(s->loss)) {
      sum += s->loss;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

EventIndex::EventIndex(const std::vector<EventRecord>& events) {
  for (const EventRecord& e : events) at_.emplace(e.step, &e);
}

std::vector<const EventRecord*> EventIndex::in(int64_t first, int64_t last) const {
  std::vector<const EventRecord*> v;
  for (auto it = at_.lower_bound(first); it != at_.end() && it->first <= last; ++it) {
    v.push_back(it->second);
  }
  return v;
}

int64_t EventIndex::compiles_in(int64_t first, int64_t last) const {
  int64_t n = 0;
  for (auto it = at_.lower_bound(first); it != at_.end() && it->first <= last; ++it) {
    if (it->second->kind == EventKind::kCompile) ++n;
  }
  return n;
}

PhaseSteps group_by_phase(const std::vector<StepRecord>& steps) {
  PhaseSteps out;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto [it, inserted] = out.by_phase.try_emplace(steps[i].phase);
    if (inserted) out.order.push_back(steps[i].phase);
    it->second.push_back(i);
  }
  std::sort(out.order.begin(), out.order.end());
  return out;
}

}  // namespace recompdiag::detail
