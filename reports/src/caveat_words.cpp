// A comparison's caveats in sentences: what weakens or qualifies its verdict.
#include <variant>

#include "detail/format.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::printf_string;

std::string phase_words(int phase) { return "phase " + std::to_string(phase); }

// The words of each kind of caveat.
struct CaveatWords {
  const Comparison& c;

  std::string operator()(const caveats::PhaseNotReached& w) const {
    return phase_words(w.phase) +
           " started (a phase_start event) but no run has a step in it: the runs stopped at the "
           "switch; it is left out";
  }
  std::string operator()(const caveats::IntervalTooNarrow& w) const {
    return phase_words(w.phase) + ": the step times of " + detail::joined(w.paths, " and ") +
           " stay alike for longer than the longest block (" + std::to_string(w.block_steps) +
           " steps): the interval may be too narrow; compare several runs per side";
  }
  std::string operator()(const caveats::LevelsBeyondNoise& w) const {
    return phase_words(w.phase) + ": the runs' own step times jump between levels " +
           detail::percent(w.level_spread) + " apart (spread of their block medians), beyond the " +
           detail::percent(w.run_noise) +
           " run-to-run spread given: it was not measured under this noise, and no time verdict "
           "rests on it; compare runs that took turns (`recompdiag ab`)";
  }
  std::string operator()(const caveats::Drift& w) const {
    std::vector<std::string> runs;
    for (const caveats::Drift::Run& r : w.runs) {
      runs.push_back(r.path + " " + phase_words(r.phase) +
                     printf_string(" %+.0f%%", (r.ratio - 1.0) * 100.0));
    }
    return "steady step time drifted from the first half of a phase to the second (a busy "
           "machine?), the verdict may reflect the conditions, not the code: " +
           detail::joined(runs) +
           (c.options.turns
                ? " (the runs took turns: the drift both saw cancels in the per-epoch ratios)"
                : "");
  }
  std::string operator()(const caveats::FewSteadySteps& w) const {
    std::vector<std::string> phases;
    for (const caveats::FewSteadySteps::Phase& p : w.phases) {
      phases.push_back(phase_words(p.phase) + " " + std::to_string(p.fewest_a) + " and " +
                       std::to_string(p.fewest_b));
    }
    return "few steady steps (fewer than " + std::to_string(c.options.min_samples) +
           "), the verdict is weak: " + detail::joined(phases) + " steady steps in A and B";
  }
  std::string operator()(const caveats::ConfigDiffers& w) const {
    constexpr size_t kNamed = 6;
    std::vector<std::string> named;
    for (size_t i = 0; i < w.differences.size() && i < kNamed; ++i) {
      const ConfigDifference& d = w.differences[i];
      named.push_back(d.key + ": " + d.a + " vs " + d.b);
    }
    std::string list = detail::joined(named);
    if (w.differences.size() > kNamed) {
      list += ", ... (" + std::to_string(w.differences.size() - kNamed) + " more)";
    }
    return "the runs' configurations differ: " + list;
  }
  std::string operator()(const caveats::TurnGrains& w) const {
    const auto grain = [](int64_t every) {
      return every == 0 ? std::string("epoch boundaries")
                        : "every " + std::to_string(every) + (every == 1 ? " step" : " steps");
    };
    return "the runs took their turns at different grains (A at " + grain(w.every_a) + ", B at " +
           grain(w.every_b) +
           "): their steps did not run side by side, and they are paired epoch by epoch; a "
           "data-parallel side takes its turns at epoch boundaries, so give `ab --turn-every 0` "
           "with one";
  }
  std::string operator()(const caveats::RunFileWarning& w) const { return w.text; }
  std::string operator()(const caveats::MatchedCompiles& w) const {
    const double change = w.a_ms > 0.0 ? w.b_ms / w.a_ms - 1.0 : 0.0;
    std::string text = phase_words(w.phase) + ": the same compiles on both sides at " +
                       detail::plural(w.pairs, "pair of steps", "pairs of steps") + ", " +
                       detail::percent(w.share) + " of the phase's time; their times differ by " +
                       printf_string("%+.1f%%", change * 100.0);
    if (!w.spread) {
      return text +
             ", which decides nothing: one compile against another is one observation, "
             "and how a compile's time spreads here is not measured (`recompdiag "
             "calibrate` measures it); the whole-phase test leaves them out";
    }
    return text + (w.beyond_spread ? ", beyond" : ", within") + " what a compile's time spreads " +
           "here (" + detail::percent(*w.spread) + ", calibrated)" +
           (w.beyond_spread ? ": the phase's verdict rests on it" : ": it decides nothing") +
           "; the whole-phase test leaves them out";
  }
};

}  // namespace

std::string caveat_words(const Caveat& caveat, const Comparison& comparison) {
  return std::visit(CaveatWords{comparison}, caveat);
}

std::vector<std::string> warnings(const Comparison& comparison) {
  std::vector<std::string> out;
  for (const Caveat& caveat : comparison.caveats) out.push_back(caveat_words(caveat, comparison));
  return out;
}

}  // namespace recompdiag::reports
