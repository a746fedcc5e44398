// The report's first screen in words, from the comparison's figures.

#include "detail/headline.h"

#include <cmath>

#include "detail/format.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports::detail {

namespace {

std::string interval(const stats::RatioTest& t) {
  if (!std::isfinite(t.high)) return "";
  return " (" + ratio(t.low) + "\u2013" + ratio(t.high) + ")";
}

// A question's verdict in words; `open` is what an inconclusive one says for that question.
std::string verdict_word(Verdict v, const char* open) {
  return v == Verdict::kInconclusive ? open : verdict_words(to_string(v));
}

// Step time: each phase's ratio and interval, under the comparison's step-time verdict.
Question step_time(const Comparison& c) {
  Question q{"Step time (steady state, and all steps)", "", "", "", "term-steady-state"};
  std::string evidence;
  for (const PhaseComparison& p : c.phases) {
    evidence += std::string(evidence.empty() ? "" : "; ") + "phase " + std::to_string(p.phase) +
                " B/A " + ratio(p.test.ratio) + interval(p.test);
    if (p.whole_decides) evidence += ", all steps " + ratio(p.whole_test.ratio);
  }
  const std::string threshold = percent(c.options.threshold);
  q.verdict = verdict_word(c.step_time_verdict, "not settled");
  if (c.step_time_verdict == Verdict::kNoChange) evidence += "; each proven within " + threshold;
  if (c.step_time_verdict == Verdict::kInconclusive) {
    evidence += "; neither a change beyond " + threshold + " nor its absence shown";
  }
  q.evidence = evidence;
  return q;
}

// Counted events: the counts that differ, what they cost, and --fail-on.
Question counted_events(const Comparison& c) {
  Question q{"Counted events (compiles, cache misses, syncs, copies)", "", "", "",
             "term-counted-cost"};
  std::string failed;
  for (const CountChange& cc : c.count_changes) {
    if (cc.fails)
      failed +=
          (failed.empty() ? "" : ", ") + count_change(cc) + " (--fail-on " + cc.failed_by + ")";
  }
  std::string evidence;
  for (const CountedCost& cost : c.counted_costs) {
    if (cost.counts.empty()) continue;
    const bool more = cost.difference_s >= 0.0;
    // The compilers' clocks are the figure where they bound the difference: counted_cost.cpp then
    // sets the difference to the very value of measured_s (std::max), so == is exact.
    const bool bound = cost.measured_bounds && cost.difference_s == cost.measured_s;
    evidence += std::string(evidence.empty() ? "" : "; ") + "phase " + std::to_string(cost.phase) +
                ": B's " + cost_causes(cost, c) + (more ? " cost " : " saved ") +
                (bound ? "at least " : "") + seconds(std::abs(cost.difference_s)) + " s" +
                (bound ? " (the compilers' own clocks)" : "") + ", " +
                percent(std::abs(cost.share)) + " of A's phase " + std::to_string(cost.phase);
  }
  if (!failed.empty()) evidence += std::string(evidence.empty() ? "" : "; ") + "B has " + failed;
  if (c.count_changes.empty()) {
    q.verdict = "same counts";
    evidence = "no compile, cache miss, sync or copy count differs";
  } else {
    q.verdict = verdict_word(c.counts_verdict, "not told from noise");
    if (c.counts_verdict == Verdict::kNoChange && !evidence.empty()) {
      evidence += "; within " + percent(c.options.threshold);
    }
  }
  if (evidence.empty()) {
    // Counts differ that cost nothing measurable on their own (alerts, per-step counts).
    for (const CountChange& cc : c.count_changes) {
      evidence += std::string(evidence.empty() ? "" : "; ") + count_change(cc) + " in phase " +
                  std::to_string(cc.phase);
    }
  }
  q.evidence = evidence;
  return q;
}

Question training_quality(const Comparison& c) {
  const ConvergenceComparison& t = c.convergence;
  Question q{"Training quality (does not gate)", to_string(t.verdict), "", "", ""};
  if (!c.a.outcome.loss_recorded || !c.b.outcome.loss_recorded) {
    q.verdict = "not compared";
    const bool neither = !c.a.outcome.loss_recorded && !c.b.outcome.loss_recorded;
    q.evidence = std::string(neither                      ? "neither side recorded a loss"
                             : !c.a.outcome.loss_recorded ? "A recorded no loss"
                                                          : "B recorded no loss") +
                 " (a loss of 0 at every step: pass the loss to the recorder, as "
                 "step_end(loss) does)";
    return q;
  }
  if (t.pairs == 0) {
    q.verdict = "not compared";
    q.evidence = "no pair of runs with losses";
    return q;
  }
  q.evidence = "final loss " + loss(t.final_loss_a) + " \u2192 " + loss(t.final_loss_b) + " (" +
               printf_string("%+.1f%%", t.final_loss_change * 100.0) + "), " +
               (t.tested ? std::to_string(t.pairs) + " seeded pairs, tested"
                         : std::string("1 pair: no test across seeds"));
  if (t.verdict == ConvergenceVerdict::kUntestedDifference) q.term = "term-untested";
  return q;
}

std::string css_of(const std::string& verdict) {
  if (verdict == "regression") return "regression";
  if (verdict == "improvement") return "improvement";
  if (verdict == "no change" || verdict == "same counts") return "no_change";
  return "open";
}

}  // namespace

Headline headline(const Comparison& c) {
  Headline h;
  switch (c.verdict) {
    case Verdict::kRegression:
      h.title = "Regression";
      break;
    case Verdict::kImprovement:
      h.title = "Improvement";
      break;
    case Verdict::kNoChange:
      h.title = "No change";
      break;
    case Verdict::kInconclusive:
      h.title = "No regression found; step time not settled";
      break;
  }
  const int code = exit_code_for(c.verdict);
  h.gate = code == 0 ? "gate: pass (exit 0" : "gate: fail (exit " + std::to_string(code);
  h.gate += c.verdict == Verdict::kInconclusive ? " unless --strict-inconclusive)" : ")";

  h.finding = story(c).switches;
  if (h.finding.empty()) {
    for (const CountedCost& cost : c.counted_costs) {
      if (!cost.counts.empty())
        h.finding.push_back("Phase " + std::to_string(cost.phase) + ": " +
                            counted_cost_line(cost, c) + ".");
    }
  }
  // Why: each cause of what torch.compile did differently, with its frame, guard and fix.
  const std::vector<std::string> causes = compile_cause_lines(c);
  h.finding.insert(h.finding.end(), causes.begin(), causes.end());
  if (h.finding.empty()) {
    h.finding.push_back(c.count_changes.empty()
                            ? "A and B compiled, missed caches, synced and copied alike: no count "
                              "differs."
                            : "Counts differ (below), at no cost measured on their own.");
  }
  h.questions = {step_time(c), counted_events(c), training_quality(c)};
  for (Question& q : h.questions) q.css = css_of(q.verdict);
  return h;
}

}  // namespace recompdiag::reports::detail
