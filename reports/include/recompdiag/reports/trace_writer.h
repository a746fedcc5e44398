#pragma once
/// \file
/// Chrome trace-event JSON of an A/B comparison (opens in Perfetto and chrome://tracing).

#include <iosfwd>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag::reports {

/// Writes both runs as two processes ("A: <path>", "B: <path>") on one time axis starting at 0:
/// every step as a slice on a "steps" track (time = cumulative wall time), phases and warm-ups as
/// slices on a "phases" track, slow stretches as slices with their attribution, and compiles,
/// phase switches and alerts as instants. `comparison` must come from compare_runs(a, b).
void write_chrome_trace(const RunFile& a, const RunFile& b, const Comparison& comparison,
                        std::ostream& out);

}  // namespace recompdiag::reports
