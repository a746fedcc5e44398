#pragma once
// The parts of analyze_run(), one file each: step-time summaries and probe counts
// (analysis_counts.cpp), per-phase summary (analysis_phases.cpp), switch cost
// (analysis_switch.cpp), slow stretches (analysis_stretches.cpp), outcome and chart data
// (analysis_outcome.cpp). Attribution of a stretch to its causes is in detail/attribution.h.

#include <cstdint>
#include <map>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/record.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag::detail {

/// Adds one step's probe counters to `c` (an absent section leaves its `has_*` false).
void add_step(ProbeCounts& c, const StepRecord& s);

/// Cache misses of one step (see ProbeCounts::cache_misses), without building a ProbeCounts.
int64_t step_cache_misses(const StepRecord& s);

/// Summary of step times already sorted ascending.
StepTimeSummary summarize_sorted(const std::vector<double>& sorted);

/// Summary of unsorted step times; selection instead of a sort keeps a million-step phase cheap.
StepTimeSummary summarize(std::vector<double> ms);

/// Mean unweighted loss per head over `steps` (NaN for a head with no finite value).
std::vector<double> mean_heads(const std::vector<const StepRecord*>& steps);

/// Mean total loss over `steps` (NaN when none is finite).
double mean_loss(const std::vector<const StepRecord*>& steps);

/// A run's events indexed by the step they precede. Holds pointers into the RunFile.
class EventIndex {
 public:
  explicit EventIndex(const std::vector<EventRecord>& events);
  /// Events at steps first..last, in step order.
  std::vector<const EventRecord*> in(int64_t first, int64_t last) const;
  /// Compile events at steps first..last.
  int64_t compiles_in(int64_t first, int64_t last) const;

 private:
  std::multimap<int64_t, const EventRecord*> at_;
};

/// Indices into RunFile::steps per phase, phases in ascending order.
struct PhaseSteps {
  std::map<int, std::vector<size_t>> by_phase;
  std::vector<int> order;
};

/// Groups the steps of a run by phase.
PhaseSteps group_by_phase(const std::vector<StepRecord>& steps);

/// Per-phase summaries (warm-up, step times, counts, drift, final loss). Marks the warm-up steps
/// in `is_warmup` (indexed like `steps`, sized by the caller).
std::vector<PhaseAnalysis> analyze_phases(const std::vector<StepRecord>& steps,
                                          const PhaseSteps& groups, const EventIndex& events,
                                          const AnalysisOptions& o, std::vector<char>& is_warmup);

/// The cost of every phase switch: the warm-up of each phase after the first is its recovery.
std::vector<SwitchCost> analyze_switches(const std::vector<StepRecord>& steps,
                                         const std::vector<PhaseAnalysis>& phases,
                                         const PhaseSteps& groups, const EventIndex& events,
                                         const AnalysisOptions& o);

/// Slow stretches with their attributed signals, the costliest `o.max_slow_stretches` in step
/// order; `*found` is the count before the cut.
std::vector<SlowStretch> find_slow_stretches(const RunFile& run,
                                             const std::vector<PhaseAnalysis>& phases,
                                             const std::vector<char>& is_warmup,
                                             const EventIndex& events, const AnalysisOptions& o,
                                             int64_t* found);

/// How training ended: the summary's figures when the run finished, else the last step's.
TrainingOutcome training_outcome(const RunFile& run);

/// Chart buckets of equal step counts, at most `o.chart_points`.
std::vector<ChartBucket> chart_data(const std::vector<StepRecord>& steps,
                                    const std::vector<char>& is_warmup, const EventIndex& events,
                                    const AnalysisOptions& o);

}  // namespace recompdiag::detail
