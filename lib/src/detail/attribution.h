#pragma once
// Attribution: which probe signals coincide with a slow stretch, ranked by a prior cost weight of
// each signal kind, and the one sentence that names them.

#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/record.h"

namespace recompdiag::detail {

/// Ranks the signals of a stretch with counts `c`, strongest first. Counters that also occur in
/// steady state (syncs, copies, host ops) count only beyond the phase's steady rate `steady`.
/// `events` are the run's events within the stretch; `optimizer` names the optimizer in text.
std::vector<Signal> rank_signals(const ProbeCounts& c, const ProbeCounts& steady,
                                 const std::vector<const EventRecord*>& events,
                                 const std::string& optimizer);

/// `observed` over a range of `steps` steps beyond what a baseline with `baseline_total` in
/// `baseline_steps` steps does at that many steps; never negative.
int64_t excess(int64_t observed, int64_t baseline_total, int64_t baseline_steps, int64_t steps);

/// The optimizer's name for text: the run header's `optimizer`, or "optimizer" when not given.
std::string optimizer_name(const RunHeader& header);

}  // namespace recompdiag::detail
