// Deprecated, removed in 0.8 with the field it fills: Comparison::story, the story's lines as 0.6
// wrote them. The story is the reports' (reports/src/story.cpp, reports::story()), worded from the
// comparison's facts; this copy stays for one minor version as the field's alias, frozen, and
// reports_test checks that the two say the same.
#include <cmath>
#include <string_view>

#include "detail/attribution.h"
#include "detail/compare_parts.h"

namespace recompdiag::detail {

namespace {

std::string side_label(const char* side, const RunAnalysis& r) {
  return r.header.mode.empty() ? std::string(side) : std::string(side) + " (" + r.header.mode + ")";
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What one run paid at a switch: its tax and what coincided with it.
std::string switch_paid(const char* side, const RunAnalysis& r, const SwitchCost& s) {
  const ProbeCounts& c = s.around;
  std::vector<std::string> parts;
  // Compiles of either compiler; the first part carries the reason noted at the switch.
  std::string reason;
  for (const CompileEvent& e : r.compiles) {
    if (e.step == s.switch_step && !e.reason.empty()) {
      reason = " (" + e.reason + ")";
      break;
    }
  }
  // What compiled or missed a cache: the parts of the umbrellas, in kProbeCounts' order, as their
  // gates count them (JIT compiles as seen: compile events count).
  bool reason_told = false;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of == nullptr) continue;
    const bool compile = std::string_view(f.part_of) == kCompilesUmbrella;
    const int64_t n = gate_value(f, c, r, s.to_phase);
    if (n <= 0) continue;
    parts.push_back(plural(n, f.one, f.many) + (compile && !reason_told ? reason : ""));
    reason_told = reason_told || compile;
  }
  if (c.optimizer_resets > 0) parts.push_back(optimizer_name(r.header) + " state reset");
  std::string text = side_label(side, r) + " paid " + format_number("%.3g s", s.tax_s);
  if (s.compile_s > 0.0) text += format_number(" (%.3g s compiling)", s.compile_s);
  if (s.noise_explained) {
    return text + ": nothing compiled, rebuilt or reset (its " +
           format_number("%.3g s", s.extra_s) +
           " of slower steps after the switch are within what the machine's noise adds to as many "
           "steady steps, up to " + format_number("%.3g s", s.noise_high_s) + ")";
  }
  if (parts.empty()) return text + ": nothing compiled, rebuilt or reset";
  text += ": ";
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

// The steady test alone, in words: "no change (proven within 5.0%)", "B 12% slower", ...
std::string steady_words(const PhaseComparison& p, const CompareOptions& o) {
  const double r = p.test.ratio;
  const bool significant = p.p_holm < o.alpha;
  if (significant && r > 1.0 + o.threshold) return format_number("B %.0f%% slower", (r - 1) * 100);
  if (significant && r < 1.0 - o.threshold) return format_number("B %.0f%% faster", (1 - r) * 100);
  if (p.tost_p_holm < o.alpha)
    return format_number("no change (proven within %.1f%%)", o.threshold * 100.0);
  if (p.unit == ReplicationUnit::kBlocks && !o.run_noise) {
    return "no verdict (one run per side, run-to-run spread not measured)";
  }
  if (p.noise_contradicted) {
    return "no verdict (the runs' step times jump further than the run-to-run spread given)";
  }
  return "inconclusive";
}

std::string unit_words(const PhaseComparison& p) {
  switch (p.unit) {
    case ReplicationUnit::kEpochPairs:
      return std::to_string(p.epoch_pairs) + " epochs paired";
    case ReplicationUnit::kStepPairs:
      return std::to_string(p.step_pairs) + (p.turn_steps == 1 ? " steps paired" : " turns paired");
    case ReplicationUnit::kRuns:
      return std::to_string(p.run_medians_a_ms.size()) + (p.paired ? " pairs of runs" : " runs");
    case ReplicationUnit::kBlocks:
      break;
  }
  return "blocks of steps";
}

}  // namespace

void tell_story(Comparison& c) {
  const CompareOptions& o = c.options;
  const bool several = c.paths_a.size() > 1 || c.paths_b.size() > 1;
  for (const SwitchCost& sa : c.a.switches) {
    for (const SwitchCost& sb : c.b.switches) {
      if (sa.to_phase != sb.to_phase) continue;
      c.story.push_back("Switch to phase " + std::to_string(sa.to_phase) +
                        (several ? " (first runs)" : "") + ": " + switch_paid("A", c.a, sa) + "; " +
                        switch_paid("B", c.b, sb) + ".");
    }
  }
  for (const CountedCost& cost : c.counted_costs) {
    std::string text = "Counted cost, phase " + std::to_string(cost.phase) + ": ";
    if (cost.counts.empty()) {
      std::string counts;
      for (const std::string& n : cost.per_step_counts) counts += (counts.empty() ? "" : ", ") + n;
      text += counts + " differ on most steps: a per-step cost, which the steady state prices.";
    } else {
      text += cost.text +
              (cost.against_counts ? std::string()
               : cost.verdict == Verdict::kRegression    ? "; a regression beyond the threshold"
               : cost.verdict == Verdict::kImprovement ? "; an improvement beyond the threshold"
               : cost.p < o.alpha
                   ? "; " + format_number("within the %.1f%% threshold", o.threshold * 100)
                   : std::string("; not told from noise")) +
              ".";
    }
    c.story.push_back(text);
  }
  std::string steady = "Steady state:";
  const std::string level = format_number("%g%%", o.bootstrap.confidence * 100.0);
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const PhaseComparison& p = c.phases[i];
    const std::string interval = std::isfinite(p.test.high)
                                     ? ", " + level + format_number(" CI %.3f", p.test.low) +
                                           format_number("-%.3f", p.test.high)
                                     : std::string();
    steady += std::string(i ? ";" : "") + " phase " + std::to_string(p.phase) + " " +
              steady_words(p, o) + format_number(" (B/A %.3f", p.test.ratio) + interval + ", " +
              unit_words(p) + ")";
  }
  c.story.push_back(steady + ".");
}

}  // namespace recompdiag::detail
