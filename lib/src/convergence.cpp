#include "recompdiag/core/convergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace recompdiag {

namespace {

// The loss of `s` under `weights` (the head losses re-weighted); the recorded loss when the head
// losses do not match the weights.
double objective(const StepRecord& s, const std::vector<double>& weights) {
  if (weights.empty() || s.head_losses.size() != weights.size()) return s.loss;
  double v = 0.0;
  for (size_t h = 0; h < weights.size(); ++h) v += weights[h] * s.head_losses[h];
  return v;
}

double mean_objective(const std::vector<StepRecord>& steps, size_t first, size_t last,
                      const std::vector<double>& weights) {
  double sum = 0.0;
  size_t n = 0;
  for (size_t k = first; k < last; ++k) {
    const double v = objective(steps[k], weights);
    if (std::isfinite(v)) {
      sum += v;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

}  // namespace

const char* to_string(ConvergenceVerdict verdict) {
  return verdict == ConvergenceVerdict::kRegression ? "regression" : "no change";
}

RunConvergence analyze_convergence(const RunFile& run, const ConvergenceOptions& o) {
  RunConvergence out;
  const std::vector<StepRecord>& steps = run.steps;
  if (steps.empty()) return out;
  const auto w = static_cast<size_t>(std::max<int64_t>(o.window, 1));
  for (size_t i = 1; i < steps.size(); ++i) {
    if (steps[i].phase == steps[i - 1].phase) continue;
    size_t end = i;
    while (end < steps.size() && steps[end].phase == steps[i].phase) ++end;
    const std::vector<double>& weights = steps[i].loss_weights;
    SwitchConvergence sc;
    sc.to_phase = steps[i].phase;
    sc.switch_step = steps[i].step;
    sc.phase_steps = static_cast<int64_t>(end - i);
    sc.loss_before = mean_objective(steps, i - std::min(w, i), i, weights);
    sc.loss_after = mean_objective(steps, i, std::min(end, i + w), weights);
    // The first step at which the mean of the last `w` steps of the new phase is back.
    for (size_t k = i; k < end; ++k) {
      const size_t from = k + 1 >= i + w ? k + 1 - w : i;
      if (mean_objective(steps, from, k + 1, weights) <= sc.loss_before) {
        sc.recovery_steps = static_cast<int64_t>(k - i);
        break;
      }
    }
    out.switches.push_back(sc);
  }
  const size_t from = steps.size() - std::min(w, steps.size());
  out.final_loss = mean_objective(steps, from, steps.size(), steps.back().loss_weights);
  const size_t heads = steps.back().head_losses.size();
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
  std::vector<const RunFile*> pa, pb;
  for (const RunFile& r : a) pa.push_back(&r);
  for (const RunFile& r : b) pb.push_back(&r);
  return compare_convergence(pa, pb, o);
}

ConvergenceComparison compare_convergence(const std::vector<const RunFile*>& a,
                                          const std::vector<const RunFile*>& b,
                                          const ConvergenceOptions& o) {
  ConvergenceComparison out;
  out.pairs = static_cast<int>(std::min(a.size(), b.size()));
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
  if (out.pairs > 0 && out.worse_pairs == out.pairs) out.verdict = ConvergenceVerdict::kRegression;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "training quality: %s (B worse in %d of %d pairs); final loss %.4g -> %.4g "
                "(%+.1f%%); steps to recover the pre-switch loss %.0f -> %.0f",
                to_string(out.verdict), out.worse_pairs, out.pairs, out.final_loss_a,
                out.final_loss_b, 100.0 * out.final_loss_change, out.recovery_steps_a,
                out.recovery_steps_b);
  out.summary = buf;
  return out;
}

}  // namespace recompdiag
