#pragma once
/// \file
/// The story a comparison tells first, in words: what each side paid at each phase switch, what
/// the differing counts cost, then the steady state. The comparison (core) finds the facts; the
/// reports word them. Every renderer prints it before its tables.
///
///     const reports::Story s = reports::story(comparison);
///     for (const std::string& line : s.lines()) std::cout << "- " << line << "\n";

#include <string>
#include <vector>

#include "recompdiag/core/compare.h"

namespace recompdiag::reports {

/// A comparison's story, a sentence each.
struct Story {
  /// One per phase switch both first runs made: "Switch to phase 2: A (recompile) paid 0.31 s
  /// (0.3 s compiling): 2 JIT compiles (phase 2: ...), 20 JIT plan builds and Adam state reset;
  /// B (mutable) paid 0.02 s: nothing compiled, rebuilt or reset." The reports' first screen.
  std::vector<std::string> switches;
  /// One per counted cost (Comparison::counted_costs): "Counted cost, phase 2: B's ...; an
  /// improvement beyond the threshold."
  std::vector<std::string> counted_costs;
  /// "Steady state: phase 1 no change (proven within 5.0%) (B/A 1.004, 95% CI 0.990-1.018,
  /// 40 steps paired); phase 2 ..."
  std::string steady;

  /// Every sentence in that order: switches, counted costs, the steady state.
  std::vector<std::string> lines() const;
};

/// The story of `comparison`, from its facts. A SwitchCount whose count this version does not know
/// is named by its key.
Story story(const Comparison& comparison);

}  // namespace recompdiag::reports
