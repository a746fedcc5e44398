// Step-time summaries, probe counts (added up as kProbeCounts says) and loss means over sets of
// steps; the run's events by step.
#include <algorithm>
#include <cmath>

#include "detail/analysis_parts.h"
#include "recompdiag/core/health.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::detail {

namespace {

int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// The lrs of the last step whose lr was not in effect, for the signal's text.
void note_lr(ProbeCounts& c, const StepRecord& s) {
  if (!s.optimizer || lr_in_effect(*s.optimizer)) return;
  c.lr_requested = s.optimizer->lr_requested;
  c.lr_effective = s.optimizer->lr_effective;
}

void note_alert(ProbeCounts& c, const std::string& rule) {
  ++c.alerts;
  if (rule == rules::kSlowStep) ++c.slow_step_alerts;
  if (rule == rules::kMemoryGrowth) ++c.memory_growth_alerts;
}

// Adds a run of `n` steps that start at `s` and whose integer fields grow by `d` per step
// (StepColumns::for_each_run), each count as its line of kProbeCounts says, in closed form. Flags
// and lrs are constant within a run.
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
  c.steps += n;
  c.sections.add_run(s, d, n);
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.source.present == nullptr || !f.source.present(s)) continue;
    if (f.measured != nullptr) c.*f.measured = true;
    const int64_t v0 = f.source.value(s);
    int64_t& sum = c.*f.value;
    switch (f.aggregate) {
      case CountAggregate::kSum:
        sum = wrapping_add(sum, total(v0, f.source.value(d)));
        break;
      case CountAggregate::kMax:
        sum = std::max({sum, v0, last(v0, f.source.value(d))});
        break;
      case CountAggregate::kSteps:
        if (v0 != 0) sum += n;
        break;
    }
  }
  note_lr(c, s);
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
  for (; it != alerts.end() && it->first < hi; ++it) note_alert(c, it->second);
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
