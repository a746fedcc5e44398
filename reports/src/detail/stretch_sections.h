#pragma once
// A run's slow stretches and what coincides with each, in the Markdown and HTML reports of a
// comparison and of a single run. Formats only.

#include <ostream>
#include <string>

#include "recompdiag/core/analysis.h"

namespace recompdiag::reports::detail {

/// "**Slow stretches in NAME** (N found, costliest 3 shown):" and a sentence each; nothing when
/// the run has none.
void write_stretches_markdown(const RunAnalysis& r, const std::string& name, std::ostream& out);

/// "<h3>NAME: N slow stretches</h3>" and a sentence each, or that no step ran over
/// `slow_factor` x its phase's steady median.
void write_stretches_html(const RunAnalysis& r, const std::string& name, double slow_factor,
                          std::ostream& out);

}  // namespace recompdiag::reports::detail
