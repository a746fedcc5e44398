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
#include "recompdiag/core/step_columns.h"

namespace recompdiag::detail {

/// A range of step indices [lo, hi).
struct IndexRange {
  size_t lo = 0;
  size_t hi = 0;
};

/// Adds the probe counters and alerts of steps [lo, hi) to `c`, a run of alike steps at a time
/// (StepColumns::for_each_run), each count as its line of kProbeCounts says (an absent section
/// leaves its `has_*` false).
void add_steps(ProbeCounts& c, const StepColumns& steps, size_t lo, size_t hi);

/// Summary of step times already sorted ascending.
StepTimeSummary summarize_sorted(const std::vector<double>& sorted);

/// Mean unweighted loss per head over the steps in `ranges` (NaN for a head with no finite value).
std::vector<double> mean_heads(const StepColumns& steps, const std::vector<IndexRange>& ranges);

/// Mean total loss over the steps in `ranges` (NaN when none is finite).
double mean_loss(const StepColumns& steps, const std::vector<IndexRange>& ranges);

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

/// The step indices of one phase in step order, kept as ranges of consecutive indices: a phase
/// of a million steps is one range.
class StepIndex {
 public:
  /// Appends index `i` (greater than the last).
  void push_back(size_t i);
  size_t size() const { return size_; }
  /// The `k`-th index.
  size_t operator[](size_t k) const;
  size_t front() const { return ranges_.front().lo; }
  size_t back() const { return ranges_.back().hi - 1; }
  /// The indices at positions [from, to) of this index, as ranges.
  std::vector<IndexRange> ranges(size_t from, size_t to) const;

 private:
  std::vector<IndexRange> ranges_;
  std::vector<size_t> before_;  ///< Indices in the ranges before each range.
  size_t size_ = 0;
};

/// Step indices per phase, phases in ascending order.
struct PhaseSteps {
  std::map<int, StepIndex> by_phase;
  std::vector<int> order;
};

/// Groups the steps of a run by phase.
PhaseSteps group_by_phase(const StepColumns& steps);

/// Per-phase summaries (warm-up, step times, counts, drift, final loss). Marks the warm-up steps
/// in `is_warmup` (indexed like `steps`, sized by the caller).
std::vector<PhaseAnalysis> analyze_phases(const StepColumns& steps, const PhaseSteps& groups,
                                          const EventIndex& events, const AnalysisOptions& o,
                                          std::vector<char>& is_warmup);

/// The cost of every phase switch: the warm-up of each phase after the first is its recovery.
std::vector<SwitchCost> analyze_switches(const StepColumns& steps,
                                         const std::vector<PhaseAnalysis>& phases,
                                         const PhaseSteps& groups, const EventIndex& events,
                                         const AnalysisOptions& o);

/// Slow stretches with their attributed signals, the costliest `o.max_slow_stretches` in step
/// order; `*found` is the count before the cut.
std::vector<SlowStretch> find_slow_stretches(const ColumnarRun& run,
                                             const std::vector<PhaseAnalysis>& phases,
                                             const std::vector<char>& is_warmup,
                                             const EventIndex& events, const AnalysisOptions& o,
                                             int64_t* found);

/// How training ended: the summary's figures when the run finished, else the last step's.
TrainingOutcome training_outcome(const ColumnarRun& run);

/// Chart buckets of equal step counts, at most `o.chart_points`.
std::vector<ChartBucket> chart_data(const StepColumns& steps, const std::vector<char>& is_warmup,
                                    const EventIndex& events, const AnalysisOptions& o);

}  // namespace recompdiag::detail
