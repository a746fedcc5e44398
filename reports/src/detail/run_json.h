#pragma once
// A run's analysis as JSON (its phases, switches, compiles, alerts, slow stretches, outcome and
// torch.compile findings), and a comparison's compile diff: what the comparison's JSON report and
// the single-run JSON report share. Formats only.

#include <nlohmann/json.hpp>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/compile_findings.h"

namespace recompdiag::reports::detail {

/// JSON has no NaN or infinity: a figure that is not finite is null.
nlohmann::json json_number(double v);
nlohmann::json json_numbers(const std::vector<double>& values);

/// Everything analyze_run() found in one run.
nlohmann::json run_json(const RunAnalysis& r);

/// torch.compile's findings in one run, with their sentences ("findings").
nlohmann::json compile_findings_json(const CompileFindings& f);

/// What two runs compiled differently, with its sentences ("lines").
nlohmann::json compile_diff_json(const CompileDiff& d);

}  // namespace recompdiag::reports::detail
