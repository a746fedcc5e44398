#pragma once
// The HTML report's charts, each one <svg> followed by its legend. Private to recompdiag::reports.

#include <ostream>

#include "recompdiag/core/compare.h"

namespace recompdiag::reports::detail {

/// Step time per step of both runs on a log scale: warm-up bands, phase switches, steady medians,
/// and for long runs the min-max band of each bucket of steps.
void step_time_chart(const Comparison& c, std::ostream& out);
/// Cache misses per step as bars (A above the axis, B below) and compiles as marked diamonds.
void events_chart(const Comparison& c, std::ostream& out);
/// Unweighted loss per head of both runs (solid A, dashed B); a line of text when there is none.
void loss_chart(const Comparison& c, std::ostream& out);

}  // namespace recompdiag::reports::detail
