#pragma once
// The report's terms, each defined once: the HTML report's "Terms" section and its links, and
// docs/glossary.md (which the reports test checks against this list).

#include <array>

namespace recompdiag::reports::detail {

struct Term {
  const char* anchor;  ///< "term-steady-state"
  const char* name;    ///< "steady state"
  const char* definition;
};

inline constexpr std::array<Term, 9> kTerms = {{
    {"term-steady-state", "steady state",
     "A phase's steps after its warm-up: the slow first steps after a start or a switch are left "
     "out, so that the median says how fast the phase runs once compiled and warm."},
    {"term-counted-cost", "counted cost",
     "What the events whose counts differ between A and B (compiles, plan builds, cache misses, "
     "syncs, copies) cost: each side's time over its steady median at the steps that carry them, "
     "plus the compile time the compilers' own clocks recorded, which counts as measured."},
    {"term-plan-build", "JIT plan build",
     "TorchScript's graph executor building an optimized plan for a new specialization (input "
     "shapes, requires_grad): a cache miss of the JIT. A recompiled step builds its plans again."},
    {"term-profiling-run", "profiling run",
     "TorchScript's profiling executor running a graph once while it records shapes, before it "
     "builds the optimized plan: slower than a plain run."},
    {"term-proven-within", "proven within the threshold",
     "No change shown, not merely not found: both one-sided tests (TOST) reject a change as large "
     "as the threshold, after Holm's correction over the phases."},
    {"term-holm", "Holm",
     "Holm's step-down correction: the phases' tests are one family, so that testing several "
     "phases does not raise the chance of a false verdict above alpha."},
    {"term-detectable", "detectable",
     "The smallest change the test would have found, given the noise it saw (its minimum "
     "detectable effect at 80% power)."},
    {"term-recovery", "steps to recover",
     "In the switch table: steps after a switch until step time is back at the new phase's "
     "steady median. In training quality: steps until the loss is back at its pre-switch level."},
    {"term-untested", "untested difference",
     "Training quality from one pair of runs: B trained worse in that pair, but no test across "
     "seeds backs it, and one more seed can turn it around. Quality never gates."},
}};

}  // namespace recompdiag::reports::detail
