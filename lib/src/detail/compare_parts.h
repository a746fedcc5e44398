#pragma once
// The parts of compare_run_sets(), one file each: the phase timing tests and their verdicts
// (compare_phases.cpp) and the exact comparison of deterministic counts (compare_counts.cpp).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"

namespace recompdiag::detail {

/// The runs of one side with their analyses, in the order given.
struct SideRuns {
  std::vector<const ColumnarRun*> files;
  std::vector<RunAnalysis> analyses;
  /// Index of the phase being compared in each analysis.
  std::vector<size_t> phase_index;
};

/// The header facts (config flattened to dotted keys, mode, device, torch version, seed, step
/// timing) that differ between two runs, sorted by key (config_diff.cpp).
std::vector<ConfigDifference> diff_headers(const RunHeader& a, const RunHeader& b);

/// The first header difference of `b` from `a` other than the seed (runs of one config may differ
/// in their seed alone), or nullopt (config_diff.cpp).
std::optional<ConfigDifference> config_difference_beyond_seed(const RunHeader& a,
                                                              const RunHeader& b);

/// printf of one number into a string.
std::string format_number(const char* format, double value);

/// The JIT compiles of `c`: its probe's, or its compile events, whichever saw more. Compile events
/// name no compiler: those torch.compile's probe accounts for are not JIT's.
inline int64_t jit_compiles_seen(const ProbeCounts& c) {
  return std::max(c.jit_compiles, c.compile_events - c.dynamo_compiles);
}

/// Whose clock measured a costed count's compile time: TorchScript's compile events (between
/// steps, EventRecord detail "compile_ms") or torch.compile's `compiled.compile_ms` (in steps).
enum class CompileClock { kNone, kJitEvents, kDynamoSteps };

/// A gate count the counted cost prices: its name (count_names()), the events one step carries
/// (linear in the step's probe fields, so that over a run of steps it is value(first) + j *
/// value(stride)), and whose clock measured their compile time.
struct CostedCount {
  const char* name;
  int64_t (*per_step)(const StepRecord& step);
  CompileClock clock = CompileClock::kNone;
};

/// The costed gate counts, in the gate table's order (compare_counts.cpp): the one list.
const std::vector<CostedCount>& costed_counts();

/// The timing comparison of one phase (test, interval, figures), before the phases are judged
/// together. Adds a warning when the autocorrelation outlasts the longest block.
PhaseComparison compare_phase_timing(int phase, const SideRuns& a, const SideRuns& b,
                                     const CompareOptions& options,
                                     std::vector<std::string>& warnings);

/// Holm over the phases, then each phase's verdict and reason; a phase's counted cost (from
/// `counted`, when it has one) decides a regression or improvement beyond the threshold whatever
/// the steady test says.
void judge_phases(std::vector<PhaseComparison>& phases, const std::vector<CountedCost>& counted,
                  const CompareOptions& options);

/// Fills `c.story` from what the comparison found: what each side paid at each switch, the
/// counted costs, the steady state (compare_story.cpp).
void tell_story(Comparison& c);

/// The counted cost of the counts of `phase` that differ (`changes`: compare_counts()'s), or
/// nullopt when no costed count differs (counted_cost.cpp).
std::optional<CountedCost> counted_cost(int phase, const SideRuns& a, const SideRuns& b,
                                        const std::vector<CountChange>& changes,
                                        const CompareOptions& options);

/// Counts of `phase` that differ between the sides (present in every run of both).
void compare_counts(int phase, const SideRuns& a, const SideRuns& b, const CompareOptions& options,
                    std::vector<CountChange>& out);

}  // namespace recompdiag::detail
