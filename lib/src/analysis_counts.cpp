// Step-time summaries, probe counts and loss means over sets of steps; the run's events by step.
#include <algorithm>
#include <cmath>

#include "detail/analysis_parts.h"
#include "recompdiag/core/health.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::detail {

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

namespace {

// Adds a run of `n` steps that start at `s` and whose integer fields grow by `d` per step
// (StepColumns::for_each_run): add_step() on each of them, in closed form.
void add_run(ProbeCounts& c, const StepRecord& s, const StepRecord& d, int64_t n) {
  // Wrapping arithmetic: fuzzed counters near the int64 limits must not be undefined behaviour.
  const auto un = static_cast<uint64_t>(n);
  const auto total = [un](int64_t v0, int64_t dv) {
    return static_cast<int64_t>(static_cast<uint64_t>(v0) * un +
                                static_cast<uint64_t>(dv) * (un * (un - 1) / 2));
  };
  const auto last = [un](int64_t v0, int64_t dv) {
    return static_cast<int64_t>(static_cast<uint64_t>(v0) + static_cast<uint64_t>(dv) * (un - 1));
  };
  const auto most = [&](int64_t v0, int64_t dv) { return std::max(v0, last(v0, dv)); };
  c.steps += n;
  c.sections.add_run(s, d, n);
  if (s.jit) {
    c.has_jit = true;
    c.jit_compiles += total(s.jit->compiles, d.jit->compiles);
    c.jit_plan_builds += total(s.jit->plan_builds, d.jit->plan_builds);
    c.jit_profiling_runs += total(s.jit->profiling_runs, d.jit->profiling_runs);
  }
  if (s.dispatch && s.dispatch->sampled) {
    const DispatchStats& v = *s.dispatch;
    const DispatchStats& dv = *d.dispatch;
    c.has_dispatch = true;
    c.new_signatures += total(v.new_signatures, dv.new_signatures);
    c.host_ops += total(v.host_ops, dv.host_ops);
    c.copies += total(v.copies_h2d, dv.copies_h2d) + total(v.copies_d2h, dv.copies_d2h) +
                total(v.copies_d2d, dv.copies_d2d);
    c.copy_bytes += total(v.bytes_h2d, dv.bytes_h2d) + total(v.bytes_d2h, dv.bytes_d2h) +
                    total(v.bytes_d2d, dv.bytes_d2d);
    c.syncs += total(v.syncs, dv.syncs);
  }
  if (s.cupti) {
    c.has_cupti = true;
    c.new_kernels += total(s.cupti->new_kernels, d.cupti->new_kernels);
    c.module_loads += total(s.cupti->module_loads, d.cupti->module_loads);
    c.graph_instantiations += total(s.cupti->graph_instantiations, d.cupti->graph_instantiations);
  }
  if (s.optimizer) {
    const OptimizerStats& o = *s.optimizer;
    const OptimizerStats& od = *d.optimizer;
    c.has_optimizer = true;
    if (o.state_reset) c.optimizer_resets += n;  // flags are constant within a run
    c.optimizer_state_off_device =
        std::max(c.optimizer_state_off_device, most(o.state_off_device, od.state_off_device));
    c.optimizer_state_missing =
        std::max(c.optimizer_state_missing, most(o.state_missing, od.state_missing));
    c.optimizer_state_dtype_mismatch = std::max(
        c.optimizer_state_dtype_mismatch, most(o.state_dtype_mismatch, od.state_dtype_mismatch));
    // The lrs are constant within a run; the health rule's test, as add_step().
    if (o.lr_requested > 0.0 &&
        std::abs(o.lr_effective - o.lr_requested) > 1e-6 * std::abs(o.lr_requested)) {
      c.lr_not_in_effect += n;
      c.lr_requested = o.lr_requested;
      c.lr_effective = o.lr_effective;
    }
  }
  if (s.memory) {
    if (!c.has_memory) c.resident_first_bytes = s.memory->resident_bytes;
    c.has_memory = true;
    c.resident_last_bytes = last(s.memory->resident_bytes, d.memory->resident_bytes);
  }
}

}  // namespace

void add_steps(ProbeCounts& c, const StepColumns& steps, size_t lo, size_t hi) {
  if (lo >= hi) return;
  steps.for_each_run(lo, hi, [&](const StepRecord& s, const StepRecord& d, size_t n) {
    add_run(c, s, d, static_cast<int64_t>(n));
  });
  const auto& alerts = steps.alerts();
  auto it = std::lower_bound(
      alerts.begin(), alerts.end(), lo,
      [](const std::pair<size_t, std::string>& a, size_t v) { return a.first < v; });
  for (; it != alerts.end() && it->first < hi; ++it) {
    ++c.alerts;
    if (it->second == rules::kSlowStep) ++c.slow_step_alerts;
    if (it->second == rules::kMemoryGrowth) ++c.memory_growth_alerts;
  }
}

namespace {

// The count, mean, spread and total of step times in any order; the order statistics are the
// caller's.
StepTimeSummary summarize_moments(const std::vector<double>& ms) {
  StepTimeSummary out;
  out.n = static_cast<int64_t>(ms.size());
  if (ms.empty()) return out;
  const stats::MeanVariance mv = stats::mean_variance(ms);
  out.mean_ms = mv.mean;
  out.stddev_ms = std::sqrt(mv.variance);
  out.total_s = mv.mean * static_cast<double>(mv.n) / 1000.0;
  return out;
}

}  // namespace

// Summary of step times already sorted ascending.
StepTimeSummary summarize_sorted(const std::vector<double>& sorted) {
  StepTimeSummary out = summarize_moments(sorted);
  if (sorted.empty()) return out;
  out.min_ms = sorted.front();
  out.max_ms = sorted.back();
  out.median_ms = stats::median_sorted(sorted);
  out.p95_ms = stats::quantile_sorted(sorted, 0.95);
  out.mad_ms = stats::mad_sorted(sorted);
  return out;
}

// Mean unweighted loss per head; a head's non-finite values are left out.
std::vector<double> mean_heads(const StepColumns& steps, const std::vector<IndexRange>& ranges) {
  std::vector<double> sum;
  std::vector<int64_t> count;
  for (const IndexRange& r : ranges) {
    for (size_t k = r.lo; k < r.hi; ++k) {
      const size_t heads = steps.head_count(k);
      const double* v = steps.head_losses(k);
      if (heads > sum.size()) {
        sum.resize(heads, 0.0);
        count.resize(heads, 0);
      }
      for (size_t h = 0; h < heads; ++h) {
        if (std::isfinite(v[h])) {
          sum[h] += v[h];
          ++count[h];
        }
      }
    }
  }
  for (size_t h = 0; h < sum.size(); ++h) {
    sum[h] = count[h] ? sum[h] / static_cast<double>(count[h]) : std::nan("");
  }
  return sum;
}

double mean_loss(const StepColumns& steps, const std::vector<IndexRange>& ranges) {
  double sum = 0.0;
  int64_t n = 0;
  for (const IndexRange& r : ranges) {
    for (size_t k = r.lo; k < r.hi; ++k) {
      if (std::isfinite(steps.loss(k))) {
        sum += steps.loss(k);
        ++n;
      }
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

void StepIndex::push_back(size_t i) {
  if (!ranges_.empty() && ranges_.back().hi == i) {
    ++ranges_.back().hi;
  } else {
    before_.push_back(size_);
    ranges_.push_back({i, i + 1});
  }
  ++size_;
}

size_t StepIndex::operator[](size_t k) const {
  const auto it = std::upper_bound(before_.begin(), before_.end(), k);
  const auto r = static_cast<size_t>(it - before_.begin()) - 1;
  return ranges_[r].lo + (k - before_[r]);
}

std::vector<IndexRange> StepIndex::ranges(size_t from, size_t to) const {
  std::vector<IndexRange> out;
  to = std::min(to, size_);
  for (size_t r = 0; r < ranges_.size() && from < to; ++r) {
    const size_t n = ranges_[r].hi - ranges_[r].lo;
    const size_t end = before_[r] + n;  // positions [before_[r], end) are this range
    if (end <= from) continue;
    const size_t lo = ranges_[r].lo + (from - before_[r]);
    const size_t hi = ranges_[r].lo + (std::min(to, end) - before_[r]);
    out.push_back({lo, hi});
    from = std::min(to, end);
  }
  return out;
}

PhaseSteps group_by_phase(const StepColumns& steps) {
  PhaseSteps out;
  StepIndex* current = nullptr;
  int current_phase = 0;
  PackedColumn::Reader phases(steps.phase_column());
  for (size_t i = 0; i < steps.size(); ++i) {
    const int phase = static_cast<int>(phases(i));
    if (current == nullptr || phase != current_phase) {
      auto [it, inserted] = out.by_phase.try_emplace(phase);
      if (inserted) out.order.push_back(phase);
      current = &it->second;
      current_phase = phase;
    }
    current->push_back(i);
  }
  std::sort(out.order.begin(), out.order.end());
  return out;
}

}  // namespace recompdiag::detail
