// A comparison in sentences: the counts that changed, what the counted events cost, why each
// phase got its verdict, and the verdict of the whole with the training quality.
#include <cmath>

#include "detail/format.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::joined;
using detail::listed;
using detail::percent;
using detail::printf_string;

std::string range(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::string p_words(double p) { return p < 0.001 ? "p < 0.001" : printf_string("p = %.3f", p); }

const CountChange* change_of(const Comparison& c, int phase, const std::string& count) {
  for (const CountChange& cc : c.count_changes) {
    if (cc.phase == phase && cc.count == count) return &cc;
  }
  return nullptr;
}

// What the steady test's figures rest on: "18 vs 18 blocks of steps, 3.0% run-to-run spread
// given", "5 pairs of runs", "40 steps paired (the runs took turns), 8 blocks of 5 tested".
std::string unit_words(const PhaseComparison& p, const CompareOptions& o) {
  switch (p.unit) {
    case ReplicationUnit::kRuns:
      return p.paired ? std::to_string(p.run_medians_a_ms.size()) + " pairs of runs"
                      : std::to_string(p.run_medians_a_ms.size()) + " vs " +
                            std::to_string(p.run_medians_b_ms.size()) + " runs";
    case ReplicationUnit::kEpochPairs:
      return std::to_string(p.epoch_pairs) + " epochs paired (the runs took turns)";
    case ReplicationUnit::kStepPairs:
      return std::to_string(p.step_pairs) +
             (p.turn_steps == 1 ? " steps paired" : " turns paired") + " (the runs took turns), " +
             std::to_string(p.pair_blocks) + " blocks of " + std::to_string(p.pair_block_length) +
             " tested";
    case ReplicationUnit::kBlocks:
      break;
  }
  const std::string blocks =
      std::to_string(p.test.n_a) + " vs " + std::to_string(p.test.n_b) + " blocks of steps";
  if (!o.run_noise) return blocks + ", run-to-run spread not measured";
  return blocks + ", " + percent(*o.run_noise) + " run-to-run spread" +
         (o.run_noise_source.empty() ? std::string(" given") : " from " + o.run_noise_source);
}

// What the whole-phase test's figures rest on.
std::string whole_unit_words(const PhaseComparison& p, const CompareOptions& o) {
  switch (p.unit) {
    case ReplicationUnit::kStepPairs:
      return std::to_string(p.whole_test.n_a) + " blocks of " +
             std::to_string(p.pair_block_length) + " paired turns";
    case ReplicationUnit::kEpochPairs:
      return std::to_string(p.whole_test.n_a) + " epochs paired";
    case ReplicationUnit::kRuns:
      return unit_words(p, o);
    case ReplicationUnit::kBlocks:
      break;
  }
  return std::to_string(p.whole_test.n_a) + " vs " + std::to_string(p.whole_test.n_b) + " epochs";
}

// "B/A 1.302 (95% CI 1.250-1.356, p < 0.001 Holm; <unit>; detectable 2.1%)".
std::string steady_figures(const PhaseComparison& p, const CompareOptions& o) {
  return printf_string("B/A %.3f", p.test.ratio) + " (" +
         printf_string("%g%%", o.bootstrap.confidence * 100.0) +
         printf_string(" CI %.3f", p.test.low) + printf_string("-%.3f, ", p.test.high) +
         p_words(p.p_holm) + " Holm; " + unit_words(p, o) + "; detectable " + percent(p.test.mde) +
         ")";
}

std::string whole_figures(const PhaseComparison& p, const CompareOptions& o) {
  return "every step of the phase, warm-up and compiles included: mean " +
         printf_string("%.3g ms", p.whole_mean_a_ms) + " -> " +
         printf_string("%.3g ms", p.whole_mean_b_ms) +
         (p.matched_compile_pairs > 0
              ? "; without the " + detail::plural(p.matched_compile_pairs, "pair", "pairs") +
                    " of steps with the same compiles"
              : std::string()) +
         printf_string(", B/A %.3f", p.whole_test.ratio) + " (" +
         printf_string("%g%%", o.bootstrap.confidence * 100.0) +
         printf_string(" CI %.3f", p.whole_test.low) + printf_string("-%.3f, ", p.whole_test.high) +
         p_words(p.whole_p_holm) + " Holm; " + whole_unit_words(p, o) + ")";
}

const CountedCost* cost_of(const Comparison& c, int phase) {
  const CountedCost* found = nullptr;
  for (const CountedCost& cost : c.counted_costs) {
    if (cost.phase == phase) found = &cost;
  }
  return found;
}

std::string gate_failure(const CountChange& cc) {
  return count_change_line(cc) + " (--fail-on " + cc.failed_by + ")";
}

}  // namespace

std::string count_change(const CountChange& c) {
  const ProbeCountField* f =
      detail::count_line(c.count, [](const ProbeCountField& l) { return l.gate.name; });
  const bool more = c.b_min > c.a_max;
  const int64_t by = more ? c.b_min - c.a_max : c.a_min - c.b_max;
  const std::string what = f == nullptr ? c.count : by == 1 ? f->one : f->many;
  return std::to_string(by) + (more ? " more " : " fewer ") + what;
}

std::string count_change_line(const CountChange& c) {
  return "B: " + count_change(c) + " in phase " + std::to_string(c.phase) + " (" +
         range(c.a_min, c.a_max) + " -> " + range(c.b_min, c.b_max) + ")";
}

std::string cost_causes(const CountedCost& cost, const Comparison& c) {
  std::vector<std::string> causes;
  for (const std::string& count : cost.cause_counts) {
    if (const CountChange* cc = change_of(c, cost.phase, count))
      causes.push_back(count_change(*cc));
  }
  return listed(causes);
}

std::string counted_cost_line(const CountedCost& cost, const Comparison& c) {
  if (cost.counts.empty()) return "";  // per-step counts only: the steady test prices them
  const CompareOptions& o = c.options;
  const bool more = cost.difference_s >= 0.0;
  // "0.31 s (95% CI 0.25-0.37 s, p = 0.002)": a difference, its interval and p, signs as `more`.
  auto estimate = [&](double d, double lo, double hi) {
    return printf_string("%.3g s", more ? d : -d) + " (" +
           printf_string("%g%% CI ", o.bootstrap.confidence * 100.0) +
           printf_string("%.3g", more ? lo : -hi) + printf_string("-%.3g s", more ? hi : -lo) +
           ", " + p_words(cost.p) + ")";
  };
  const std::string share = percent(std::abs(cost.share)) + " of A's phase " +
                            std::to_string(cost.phase) + printf_string(" (%.3g s)", cost.phase_s_a);
  const std::string clocks = " compiling, as the compilers' own clocks measured";
  std::string text = "B's " + cost_causes(cost, c) + (more ? " cost " : " saved ");
  if (cost.measured_bounds && std::abs(cost.measured_s) >= std::abs(cost.steps_s)) {
    // The measurement says more than the steps: it is the figure, the steps' estimate beside it.
    text +=
        "at least " + printf_string("%.3g s", std::abs(cost.measured_s)) + clocks +
        " (the step times alone: " + estimate(cost.steps_s, cost.steps_low_s, cost.steps_high_s) +
        "), " + share;
  } else {
    text += estimate(cost.difference_s, cost.low_s, cost.high_s) + ", " + share;
    if (cost.measured_bounds) {
      text +=
          "; at least " + printf_string("%.3g s", std::abs(cost.measured_s)) + " of it" + clocks;
    }
  }
  if (cost.against_counts) {
    // Against the counts: slower with only fewer of them, or faster with only more.
    text += std::string("; against the counts (B has ") + (more ? "fewer" : "more") +
            " of them): not what they cost, and it decides nothing";
  }
  return text;
}

std::string phase_reason(const PhaseComparison& p, const Comparison& c) {
  const CompareOptions& o = c.options;
  const std::string threshold = percent(o.threshold);
  const std::string figures = steady_figures(p, o);
  const bool slower = p.verdict == Verdict::kRegression;
  switch (p.verdict) {
    case Verdict::kRegression:
    case Verdict::kImprovement:
      if (p.counted_decides) {
        const CountedCost* cost = cost_of(c, p.phase);
        return std::string(slower ? "what the counted events cost"
                                  : "what the counted events saved") +
               " is beyond the " + threshold +
               " threshold: " + (cost ? counted_cost_line(*cost, c) : std::string()) +
               "; steady state alone: " + figures;
      }
      if (p.compile_time_decides && p.compile_time_test) {
        const stats::RatioTest& t = *p.compile_time_test;
        return std::string("the same compiles took ") + (slower ? "longer" : "less time") +
               " beyond the " + threshold +
               " threshold and beyond how a compile's time spreads "
               "here (" +
               percent(o.compile_spread.value_or(0.0)) + ", calibrated): B/A " +
               printf_string("%.3f", t.ratio) + " (" + percent(o.bootstrap.confidence) +
               printf_string(" CI %.3f", t.low) + printf_string("-%.3f, ", t.high) + p_words(t.p) +
               "; " + std::to_string(p.matched_compile_pairs) +
               " pairs of steps); steady state alone: " + figures;
      }
      if (p.whole_decides) {
        return std::string(slower ? "slower" : "faster") + " beyond the " + threshold +
               " threshold over " + whole_figures(p, o) + "; steady state alone: " + figures;
      }
      return std::string(slower ? "slower" : "faster") + " beyond the " + threshold +
             " threshold: " + figures;
    case Verdict::kNoChange:
      return "equivalent within the " + threshold + " threshold (TOST " + p_words(p.tost_p_holm) +
             " Holm): " + figures;
    case Verdict::kInconclusive:
      break;
  }
  const std::string ratio = printf_string("; B/A %.3f", p.test.ratio);
  if (p.unit == ReplicationUnit::kBlocks && !o.run_noise) {
    return "one run per side that did not take turns, and no measured run-to-run spread: no time "
           "verdict (give several runs per side, --noise-profile from `recompdiag bench noise`, or "
           "runs that take turns with `recompdiag ab`)" +
           ratio;
  }
  if (p.noise_contradicted) {
    return "the runs' own step times jump between levels " + percent(p.level_spread) +
           " apart, beyond the " + percent(o.run_noise.value_or(0.0)) +
           " run-to-run spread given: no time verdict rests on it (runs that take turns with "
           "`recompdiag ab` cancel the levels)" +
           ratio;
  }
  return "cannot be told from the " + threshold + " threshold at this noise: " + figures +
         "; about " + std::to_string(p.runs_needed) + " runs per side would settle it";
}

std::string time_summary(const Comparison& c) {
  const CountChange* failing = nullptr;
  for (const CountChange& cc : c.count_changes) {
    if (cc.fails && !failing) failing = &cc;
  }
  const PhaseComparison* phase = nullptr;
  for (const PhaseComparison& p : c.phases) {
    if (p.phase == c.deciding_phase) phase = &p;
  }
  if (phase == nullptr) {
    if (failing) return "regression: " + gate_failure(*failing);
    return "no change: every phase's steady median is proven within the " +
           percent(c.options.threshold) + " threshold (TOST, Holm)";
  }
  const std::string verdict = to_string(c.verdict);
  const std::string name = "phase " + std::to_string(phase->phase);
  const std::string reason = phase_reason(*phase, c);
  std::string text;
  if (phase->counted_decides) {
    text = verdict + ": " + name + ": " + reason;
  } else if (c.verdict == Verdict::kRegression) {
    // A time cost names first the signal by which the phase differs from A's: "regression: phase
    // 2 regressed 38% in steady state: B: 12 JIT compiles after warm-up, one per epoch; ...".
    text = "regression: " + name + " regressed " +
           printf_string("%.0f%%", (phase->decisive_ratio - 1.0) * 100.0) +
           (phase->whole_decides ? " over all its steps" : " in steady state") +
           (c.deciding_signal ? ": B: " + signal_words(*c.deciding_signal)
                              : std::string(" (no probe signal differs)")) +
           "; " + reason;
  } else {
    text =
        verdict + ": " + name +
        (phase->whole_decides
             ? " mean step over all its steps " + printf_string("%.3g ms", phase->whole_mean_a_ms) +
                   " -> " + printf_string("%.3g ms", phase->whole_mean_b_ms)
             : " steady median " + printf_string("%.3g ms", phase->median_a_ms) + " -> " +
                   printf_string("%.3g ms", phase->median_b_ms)) +
        ", " + reason;
  }
  if (failing) text += "; and " + gate_failure(*failing);
  return text;
}

std::string convergence_summary(const ConvergenceComparison& q) {
  std::string text = "training quality: " + std::string(to_string(q.verdict));
  if (q.tested) {
    std::vector<std::string> regressed;
    std::vector<std::string> improved;
    for (const QualityMeasure& m : q.measures) {
      const std::string change = m.label + " " + printf_string("%+.1f%%", 100.0 * m.change);
      if (m.regression) {
        regressed.push_back(change + " (p=" + printf_string("%.2g", m.p) + ")");
      } else if (m.better_pairs == q.pairs) {
        improved.push_back(change);
      }
    }
    text += " over " + std::to_string(q.pairs) + " seeded pairs";
    if (!regressed.empty()) text += ": " + joined(regressed);
    if (!improved.empty()) text += "; better in every pair: " + joined(improved);
  } else if (q.verdict == ConvergenceVerdict::kUntestedDifference) {
    text += " (B worse in its one pair; no test across seeds: rerun with more seeds to test it)";
  } else {
    text += " (" + std::to_string(q.pairs) + " pair: no test across seeds)";
  }
  return text + "; quality does not gate; final loss " + printf_string("%.4g", q.final_loss_a) +
         " -> " + printf_string("%.4g", q.final_loss_b) +
         printf_string(" (%+.1f%%)", 100.0 * q.final_loss_change) +
         "; steps to recover the pre-switch loss " + printf_string("%.0f", q.recovery_steps_a) +
         " -> " + printf_string("%.0f", q.recovery_steps_b);
}

std::string summary(const Comparison& c) {
  std::string text = time_summary(c);
  if (c.convergence.verdict != ConvergenceVerdict::kNoChange) {
    text += "; " + convergence_summary(c.convergence);
  }
  return text;
}

}  // namespace recompdiag::reports
