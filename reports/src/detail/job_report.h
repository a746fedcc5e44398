#pragma once
// The data-parallel job section of a report (issue 11): one table of the ranks and the straggler
// of each slow stretch, in each format. Formats only: analyze_job() computed everything.

#include <nlohmann/json.hpp>
#include <ostream>

#include "recompdiag/core/straggler.h"

namespace recompdiag::reports::detail {

/// The job of side `side` ("A", "B") as Markdown: a rank table and the straggler sentences.
void write_job_markdown(const JobAnalysis& job, const char* side, std::ostream& out);
/// The same as an HTML section (escaped).
void write_job_html(const JobAnalysis& job, const char* side, std::ostream& out);
/// The same as JSON: {"job_id", "world_size", "ranks": [...], "stragglers": [...]}.
nlohmann::json job_json(const JobAnalysis& job);

}  // namespace recompdiag::reports::detail
