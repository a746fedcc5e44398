// The story a comparison tells first, worded from its facts: what each side paid at each switch,
// what the counted events cost, then the steady state.
#include "recompdiag/reports/story.h"

#include <cmath>
#include <string_view>

#include "detail/format.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::listed;
using detail::plural;
using detail::printf_string;

std::string side_label(const char* side, const RunAnalysis& r) {
  return r.header.mode.empty() ? std::string(side) : std::string(side) + " (" + r.header.mode + ")";
}

// What one run paid at a switch: its tax and what coincided with it (`counted`, the umbrellas'
// parts, SwitchComparison::counted_a or _b).
std::string switch_paid(const char* side, const RunAnalysis& r, const SwitchCost& s,
                        const std::vector<SwitchCount>& counted) {
  // The first compile carries the reason noted at the switch.
  std::string reason;
  for (const CompileEvent& e : r.compiles) {
    if (e.step == s.switch_step && !e.reason.empty()) {
      reason = " (" + e.reason + ")";
      break;
    }
  }
  std::vector<std::string> parts;
  bool reason_told = false;
  for (const SwitchCount& c : counted) {
    const ProbeCountField* f =
        detail::count_line(c.count, [](const ProbeCountField& l) { return l.key; });
    const bool compile =
        f != nullptr && f->part_of != nullptr && std::string_view(f->part_of) == kCompilesUmbrella;
    const std::string counted =
        f != nullptr ? plural(c.n, f->one, f->many) : std::to_string(c.n) + " " + c.count;
    parts.push_back(counted + (compile && !reason_told ? reason : ""));
    reason_told = reason_told || compile;
  }
  if (s.around.optimizer_resets > 0) {
    parts.push_back((r.header.optimizer.empty() ? std::string("optimizer") : r.header.optimizer) +
                    " state reset");
  }
  std::string text = side_label(side, r) + " paid " + printf_string("%.3g s", s.tax_s);
  if (s.compile_s > 0.0) text += printf_string(" (%.3g s compiling)", s.compile_s);
  if (s.noise_explained) {
    return text + ": nothing compiled, rebuilt or reset (its " +
           printf_string("%.3g s", s.extra_s) +
           " of slower steps after the switch are within what the machine's noise adds to as many "
           "steady steps, up to " + printf_string("%.3g s", s.noise_high_s) + ")";
  }
  if (parts.empty()) return text + ": nothing compiled, rebuilt or reset";
  return text + ": " + listed(parts);
}

const SwitchCost* switch_to(const RunAnalysis& r, int phase) {
  for (const SwitchCost& s : r.switches) {
    if (s.to_phase == phase) return &s;
  }
  return nullptr;
}

// What a counted cost amounts to; nothing when it runs against the counts (not their cost).
std::string cost_judged(const CountedCost& cost, const CompareOptions& o) {
  if (cost.against_counts) return "";
  if (cost.verdict == Verdict::kRegression) return "; a regression beyond the threshold";
  if (cost.verdict == Verdict::kImprovement) return "; an improvement beyond the threshold";
  if (cost.p < o.alpha) {
    return "; " + printf_string("within the %.1f%% threshold", o.threshold * 100);
  }
  return "; not told from noise";
}

std::string counted_cost_words(const CountedCost& cost, const Comparison& c) {
  const CompareOptions& o = c.options;
  std::string text = "Counted cost, phase " + std::to_string(cost.phase) + ": ";
  if (cost.counts.empty()) {
    return text + detail::joined(cost.per_step_counts) +
           " differ on most steps: a per-step cost, which the steady state prices.";
  }
  return text + counted_cost_line(cost, c) + cost_judged(cost, o) + ".";
}

// The steady test alone, in words: "no change (proven within 5.0%)", "B 12% slower", ...
std::string steady_words(const PhaseComparison& p, const CompareOptions& o) {
  const double r = p.test.ratio;
  const bool significant = p.p_holm < o.alpha;
  if (significant && r > 1.0 + o.threshold) return printf_string("B %.0f%% slower", (r - 1) * 100);
  if (significant && r < 1.0 - o.threshold) return printf_string("B %.0f%% faster", (1 - r) * 100);
  if (p.tost_p_holm < o.alpha) {
    return printf_string("no change (proven within %.1f%%)", o.threshold * 100.0);
  }
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

std::string steady_state(const Comparison& c) {
  const CompareOptions& o = c.options;
  std::string steady = "Steady state:";
  const std::string level = printf_string("%g%%", o.bootstrap.confidence * 100.0);
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const PhaseComparison& p = c.phases[i];
    const std::string interval = std::isfinite(p.test.high)
                                     ? ", " + level + printf_string(" CI %.3f", p.test.low) +
                                           printf_string("-%.3f", p.test.high)
                                     : std::string();
    steady += std::string(i ? ";" : "") + " phase " + std::to_string(p.phase) + " " +
              steady_words(p, o) + printf_string(" (B/A %.3f", p.test.ratio) + interval + ", " +
              unit_words(p) + ")";
  }
  return steady + ".";
}

}  // namespace

std::vector<std::string> Story::lines() const {
  std::vector<std::string> out = switches;
  out.insert(out.end(), counted_costs.begin(), counted_costs.end());
  out.push_back(steady);
  return out;
}

Story story(const Comparison& c) {
  Story s;
  const bool several = c.paths_a.size() > 1 || c.paths_b.size() > 1;
  for (const SwitchComparison& sw : c.switches) {
    const SwitchCost* a = switch_to(c.a, sw.to_phase);
    const SwitchCost* b = switch_to(c.b, sw.to_phase);
    if (a == nullptr || b == nullptr) continue;
    s.switches.push_back("Switch to phase " + std::to_string(sw.to_phase) +
                         (several ? " (first runs)" : "") + ": " +
                         switch_paid("A", c.a, *a, sw.counted_a) + "; " +
                         switch_paid("B", c.b, *b, sw.counted_b) + ".");
  }
  for (const CountedCost& cost : c.counted_costs) {
    s.counted_costs.push_back(counted_cost_words(cost, c));
  }
  s.steady = steady_state(c);
  return s;
}

}  // namespace recompdiag::reports
