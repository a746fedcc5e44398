#pragma once
// The HTML report's charts, each one <svg> followed by its legend. Private to recompdiag::reports.

#include <ostream>
#include <vector>

#include "recompdiag/core/analysis.h"

namespace recompdiag::reports::detail {

/// The runs a chart draws: A and B of a comparison, or one run alone (no A/B legend).
using ChartRuns = std::vector<const RunAnalysis*>;

/// Step time per step of the runs on a log scale: warm-up bands, phase switches, steady medians,
/// and for long runs the min-max band of each bucket of steps.
void step_time_chart(const ChartRuns& runs, std::ostream& out);
/// Cache misses per step as bars (A above the axis, B below; one run above it) and compiles as marked diamonds.
void events_chart(const ChartRuns& runs, std::ostream& out);
/// Unweighted loss per head of the runs (solid A, dashed B); a line of text when there is none.
void loss_chart(const ChartRuns& runs, std::ostream& out);

}  // namespace recompdiag::reports::detail
