#include "recompdiag/core/convergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "recompdiag/core/error.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag {

namespace {

// The loss of step `k` under `weights` (the head losses re-weighted); the recorded loss when the
// head losses do not match the weights.
double objective(const StepColumns& steps, size_t k, const std::vector<double>& weights) {
  const double* heads = steps.head_losses(k);
  if (weights.empty() || steps.head_count(k) != weights.size()) return steps.loss(k);
  double v = 0.0;
  for (size_t h = 0; h < weights.size(); ++h) v += weights[h] * heads[h];
  return v;
}

double mean_objective(const StepColumns& steps, size_t first, size_t last,
                      const std::vector<double>& weights) {
  double sum = 0.0;
  size_t n = 0;
  for (size_t k = first; k < last; ++k) {
    const double v = objective(steps, k, weights);
    if (std::isfinite(v)) {
      sum += v;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

// Steps after `first` until the mean objective of the last `w` steps of [first, end) is back at
// `target` (-1: never). A running sum over the window finds each step's mean in O(1); the exact
// mean decides whenever the running one is close, so that its rounding never changes the answer.
int64_t recovery_steps(const StepColumns& steps, size_t first, size_t end, size_t w,
                       const std::vector<double>& weights, double target) {
  double sum = 0.0;
  size_t count = 0;
  auto add = [&](size_t k, double sign) {
    const double v = objective(steps, k, weights);
    if (!std::isfinite(v)) return;
    sum += sign * v;
    count = sign > 0 ? count + 1 : count - 1;
  };
  for (size_t k = first; k < end; ++k) {
    const size_t from = k + 1 >= first + w ? k + 1 - w : first;
    add(k, 1.0);
    if (from > first) add(from - 1, -1.0);
    if (!std::isfinite(sum)) {  // overflowed: start the window's sum afresh
      sum = 0.0;
      count = 0;
      for (size_t j = from; j <= k; ++j) add(j, 1.0);
    }
    if (count == 0) continue;
    const double running = sum / static_cast<double>(count);
    const double slack = 1e-9 * (std::fabs(running) + std::fabs(target));
    if (running <= target + slack && mean_objective(steps, from, k + 1, weights) <= target) {
      return static_cast<int64_t>(k - first);
    }
  }
  return -1;
}

}  // namespace

const char* to_string(ConvergenceVerdict verdict) {
  switch (verdict) {
    case ConvergenceVerdict::kRegression:
      return "regression";
    case ConvergenceVerdict::kUntestedDifference:
      return "untested difference";
    case ConvergenceVerdict::kNoChange:
      break;
  }
  return "no change";
}

RunConvergence analyze_convergence(const RunFile& run, const ConvergenceOptions& o) {
  return analyze_convergence(to_columnar(run), o);
}

void ConvergenceOptions::validate() const {
  require_at_least("ConvergenceOptions::window", window, 1);
  require_in_range("ConvergenceOptions::loss_tolerance", loss_tolerance, 0.0, HUGE_VAL, false,
                   true);
  require_in_range("ConvergenceOptions::recovery_slack", recovery_slack, 1.0, HUGE_VAL, false,
                   true);
  require_in_range("ConvergenceOptions::alpha", alpha, 0.0, 1.0, true, true);
}

RunConvergence analyze_convergence(const ColumnarRun& run, const ConvergenceOptions& o) {
  o.validate();
  RunConvergence out;
  const StepColumns& steps = run.steps;
  if (steps.empty()) return out;
  const auto w = static_cast<size_t>(std::max<int64_t>(o.window, 1));
  PackedColumn::Reader phase(steps.phase_column());
  PackedColumn::Reader epoch(steps.epoch_column());
  for (size_t i = 1; i < steps.size(); ++i) {
    if (phase(i) == phase(i - 1)) continue;
    size_t end = i;
    while (end < steps.size() && phase(end) == phase(i)) ++end;
    const std::vector<double>& weights = steps.loss_weights(i);
    SwitchConvergence sc;
    sc.to_phase = steps.phase(i);
    sc.switch_step = steps.step(i);
    sc.phase_steps = static_cast<int64_t>(end - i);
    sc.loss_before = mean_objective(steps, i - std::min(w, i), i, weights);
    sc.loss_after = mean_objective(steps, i, std::min(end, i + w), weights);
    sc.recovery_steps = recovery_steps(steps, i, end, w, weights, sc.loss_before);
    sc.phase_loss = mean_objective(steps, i, end, weights);
    for (size_t k = i; k < end;) {
      size_t epoch_end = k;
      while (epoch_end < end && epoch(epoch_end) == epoch(k)) ++epoch_end;
      sc.epoch_losses.push_back(mean_objective(steps, k, epoch_end, weights));
      k = epoch_end;
    }
    out.switches.push_back(sc);
  }
  const size_t from = steps.size() - std::min(w, steps.size());
  out.final_loss = mean_objective(steps, from, steps.size(), steps.loss_weights(steps.size() - 1));
  const size_t heads = steps.head_count(steps.size() - 1);
  for (size_t h = 0; h < heads; ++h) {
    std::vector<double> one(heads, 0.0);
    one[h] = 1.0;
    out.final_head_losses.push_back(mean_objective(steps, from, steps.size(), one));
  }
  return out;
}

ConvergenceComparison compare_convergence(const std::vector<RunFile>& a,
                                          const std::vector<RunFile>& b,
                                          const ConvergenceOptions& o) {
  std::vector<ColumnarRun> ca, cb;
  for (const RunFile& r : a) ca.push_back(to_columnar(r));
  for (const RunFile& r : b) cb.push_back(to_columnar(r));
  std::vector<const ColumnarRun*> pa, pb;
  for (const ColumnarRun& r : ca) pa.push_back(&r);
  for (const ColumnarRun& r : cb) pb.push_back(&r);
  return compare_convergence(pa, pb, o);
}

ConvergenceComparison compare_convergence(const std::vector<const RunFile*>& a,
                                          const std::vector<const RunFile*>& b,
                                          const ConvergenceOptions& o) {
  std::vector<ColumnarRun> ca, cb;
  for (const RunFile* r : a) ca.push_back(to_columnar(*r));
  for (const RunFile* r : b) cb.push_back(to_columnar(*r));
  std::vector<const ColumnarRun*> pa, pb;
  for (const ColumnarRun& r : ca) pa.push_back(&r);
  for (const ColumnarRun& r : cb) pb.push_back(&r);
  return compare_convergence(pa, pb, o);
}

namespace {

/// A measure of one run's convergence; NaN when the run lacks it.
using Extract = std::function<double(const RunConvergence&)>;

/// Fills `m` from the pairs: means, per-pair log ratios, and the one-sided paired t-test's raw p.
void measure_pairs(QualityMeasure& m, const std::vector<RunConvergence>& a,
                   const std::vector<RunConvergence>& b, const Extract& extract, double tolerance) {
  std::vector<double> logs;
  double sum_a = 0.0, sum_b = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double va = extract(a[i]);
    const double vb = extract(b[i]);
    if (!(va > 0.0) || !(vb > 0.0) || !std::isfinite(va) || !std::isfinite(vb)) continue;
    sum_a += va;
    sum_b += vb;
    logs.push_back(std::log(vb / va));
    if (vb > va * (1.0 + tolerance)) ++m.worse_pairs;
    if (vb < va * (1.0 - tolerance)) ++m.better_pairs;
  }
  const auto n = static_cast<double>(logs.size());
  if (logs.empty()) return;
  m.a = sum_a / n;
  m.b = sum_b / n;
  const stats::MeanVariance mv = stats::mean_variance(logs);
  m.change = std::exp(mv.mean) - 1.0;
  m.p = 1.0;
  if (logs.size() < 2) return;
  const double se = std::sqrt(mv.variance / n);
  if (se > 0.0) {
    m.p = stats::student_t_upper_tail(mv.mean / se, n - 1.0);
  } else if (mv.mean > 0.0) {
    m.p = 0.0;  // the same worsening in every pair
  }
}

}  // namespace

ConvergenceComparison compare_convergence(const std::vector<const ColumnarRun*>& a,
                                          const std::vector<const ColumnarRun*>& b,
                                          const ConvergenceOptions& o) {
  o.validate();
  ConvergenceComparison out;
  out.pairs = static_cast<int>(std::min(a.size(), b.size()));
  out.tested = out.pairs >= 2;
  auto recovery = [](const RunConvergence& c) -> double {
    if (c.switches.empty()) return 0.0;
    const SwitchConvergence& s = c.switches.front();
    return static_cast<double>(s.recovery_steps >= 0 ? s.recovery_steps : s.phase_steps);
  };
  for (int i = 0; i < out.pairs; ++i) {
    out.a.push_back(analyze_convergence(*a[static_cast<size_t>(i)], o));
    out.b.push_back(analyze_convergence(*b[static_cast<size_t>(i)], o));
    const RunConvergence& ca = out.a.back();
    const RunConvergence& cb = out.b.back();
    out.final_loss_a += ca.final_loss / out.pairs;
    out.final_loss_b += cb.final_loss / out.pairs;
    out.recovery_steps_a += recovery(ca) / out.pairs;
    out.recovery_steps_b += recovery(cb) / out.pairs;
    const bool loss_worse = cb.final_loss > ca.final_loss * (1.0 + o.loss_tolerance);
    const bool slower_recovery =
        recovery(cb) > o.recovery_slack * recovery(ca) + static_cast<double>(o.window);
    if (loss_worse || slower_recovery) ++out.worse_pairs;
  }
  if (out.final_loss_a != 0.0) {
    out.final_loss_change = (out.final_loss_b - out.final_loss_a) / out.final_loss_a;
  }

  // The measures, each over the pairs.
  const bool has_switch = out.pairs > 0 && !out.a.front().switches.empty();
  const auto last_switch = [](const RunConvergence& c) -> const SwitchConvergence* {
    return c.switches.empty() ? nullptr : &c.switches.back();
  };
  const double nan = std::nan("");
  if (has_switch) {
    const int phase = out.a.front().switches.back().to_phase;
    QualityMeasure m{"last_phase_loss", "mean loss over phase " + std::to_string(phase)};
    measure_pairs(
        m, out.a, out.b,
        [&](const RunConvergence& c) { return last_switch(c) ? last_switch(c)->phase_loss : nan; },
        o.loss_tolerance);
    out.measures.push_back(m);
    QualityMeasure after{"loss_after_switch",
                         "loss just after the switch to phase " + std::to_string(phase)};
    measure_pairs(
        after, out.a, out.b,
        [&](const RunConvergence& c) { return last_switch(c) ? last_switch(c)->loss_after : nan; },
        o.loss_tolerance);
    out.measures.push_back(after);
  }
  QualityMeasure final_loss{"final_loss", "final loss"};
  measure_pairs(
      final_loss, out.a, out.b, [](const RunConvergence& c) { return c.final_loss; },
      o.loss_tolerance);
  out.measures.push_back(final_loss);
  const size_t heads = out.pairs > 0 ? out.a.front().final_head_losses.size() : 0;
  for (size_t h = 0; h < heads; ++h) {
    QualityMeasure m{"final_loss_head_" + std::to_string(h + 1),
                     "final loss of head " + std::to_string(h + 1)};
    measure_pairs(
        m, out.a, out.b,
        [&](const RunConvergence& c) {
          return h < c.final_head_losses.size() ? c.final_head_losses[h] : nan;
        },
        o.loss_tolerance);
    out.measures.push_back(m);
  }

  if (out.tested) {
    std::vector<double> raw;
    for (const QualityMeasure& m : out.measures) raw.push_back(m.p);
    const std::vector<double> adjusted = stats::holm_adjust(raw);
    bool regressed = false;
    for (size_t k = 0; k < out.measures.size(); ++k) {
      QualityMeasure& m = out.measures[k];
      m.p = adjusted[k];
      m.regression = m.p < o.alpha && m.change > o.loss_tolerance;
      regressed |= m.regression;
    }
    if (regressed) out.verdict = ConvergenceVerdict::kRegression;
  } else if (out.pairs > 0 && out.worse_pairs == out.pairs) {
    // One pair shows B worse by its final loss or recovery: a difference, untested.
    out.verdict = ConvergenceVerdict::kUntestedDifference;
  }
  return out;
}

}  // namespace recompdiag
