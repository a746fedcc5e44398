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

/// Run `i` of a side: its analysis of the phase compared.
inline const PhaseAnalysis& phase_of(const SideRuns& side, size_t i) {
  return side.analyses[i].phases[side.phase_index[i]];
}

/// The header facts (config flattened to dotted keys, mode, device, torch version, seed, step
/// timing) that differ between two runs, sorted by key (config_diff.cpp).
std::vector<ConfigDifference> diff_headers(const RunHeader& a, const RunHeader& b);

/// The first header difference of `b` from `a` other than the seed (runs of one config may differ
/// in their seed alone), or nullopt (config_diff.cpp).
std::optional<ConfigDifference> config_difference_beyond_seed(const RunHeader& a,
                                                              const RunHeader& b);

/// printf of one number into a string.
std::string format_number(const char* format, double value);

/// The gate's value of count `f` (a line of kProbeCounts) in `run`'s `phase` whose counts are
/// `counts`: its gate's own value, its member, or an umbrella's parts' added up (compare_counts.cpp).
int64_t gate_value(const ProbeCountField& f, const ProbeCounts& counts, const RunAnalysis& run,
                   int phase);

/// The value of the gate count `name` (count_names()) in `run`'s `phase` whose counts are
/// `counts`, or nullopt when the run did not measure it (compare_counts.cpp).
std::optional<int64_t> gate_count_value(const std::string& name, const ProbeCounts& counts,
                                        const RunAnalysis& run, int phase);

/// A gate count the counted cost prices (a `costed` gate of kProbeCounts): its name
/// (count_names()), what tells the events one step carries, and whose clock measured its compile
/// time.
struct CostedCount {
  const char* name;
  /// The gate's own per-step events, the count's source, or an umbrella's parts' sources: each
  /// linear in the step's probe fields within a run of alike steps, so that over a run of steps
  /// their sum is events(first) + j * events(stride).
  std::vector<int64_t (*)(const StepRecord&)> sources;
  CompileClock clock = CompileClock::kNone;

  /// The events `step` carries: the sum of `sources`, wrapping (fuzzed counters must not
  /// overflow).
  int64_t events(const StepRecord& step) const {
    uint64_t n = 0;
    for (const auto source : sources) n += static_cast<uint64_t>(source(step));
    return static_cast<int64_t>(n);
  }
};

/// The costed gate counts, in kProbeCounts' order (compare_counts.cpp).
const std::vector<CostedCount>& costed_counts();

/// Where a comparison's caveats go (Comparison::caveats), in the order they came; the reports word
/// them (reports::warnings()).
struct Warnings {
  std::vector<Caveat>& caveats;

  void add(Caveat caveat) { caveats.push_back(std::move(caveat)); }
};

/// The timing comparison of one phase (test, interval, figures), before the phases are judged
/// together. Adds a caveat when the autocorrelation outlasts the longest block, or the step times
/// jump between levels beyond the run-to-run spread given.
PhaseComparison compare_phase_timing(int phase, const SideRuns& a, const SideRuns& b,
                                     const CompareOptions& options, Warnings& warnings);

/// Holm over the phases, then each phase's verdict and reason; a phase's counted cost (from
/// `counted`, when it has one) decides a regression or improvement beyond the threshold whatever
/// the steady test says.
void judge_phases(std::vector<PhaseComparison>& phases, const std::vector<CountedCost>& counted,
                  const CompareOptions& options);

/// The counted cost of the counts of `phase` that differ (`changes`: compare_counts()'s), or
/// nullopt when no costed count differs (counted_cost.cpp).
std::optional<CountedCost> counted_cost(int phase, const SideRuns& a, const SideRuns& b,
                                        const std::vector<CountChange>& changes,
                                        const CompareOptions& options);

/// Counts of `phase` that differ between the sides (present in every run of both).
void compare_counts(int phase, const SideRuns& a, const SideRuns& b, const CompareOptions& options,
                    std::vector<CountChange>& out);

}  // namespace recompdiag::detail
