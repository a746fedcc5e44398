#pragma once
/// \file
/// One run's report, or one job's: what `recompdiag report RUN...` writes. The finding comes
/// first (why it recompiled, cause by cause, with the frame, the guard and the fix; the eager
/// cliff; graph breaks; caches; the other probes' alerts), then the phases, the slow stretches and
/// the charts. Renderers only format what report_run_paths() found.
///
///     const RunReport report = report_run_paths({"run.jsonl"});
///     reports::render_run_report(report, reports::ReportFormat::kMarkdown, std::cout);

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/renderer.h"

namespace recompdiag::reports {

/// The first screen of a run's report, in words.
struct RunHeadline {
  /// "torch.compile recompiled 5 frames 12 times, then ran compiled frames eagerly from step 11"
  std::string title;
  /// What happened, by cause: the compile findings (compile_finding_lines()), then the alerts of
  /// the other probes, one sentence per rule (alert_group_sentence()).
  std::vector<std::string> findings;
  /// The compile alerts the findings above already explain, by rule and count: "recompile_budget
  /// 5 times, compile_after_warmup once"; empty when none fired.
  std::string compile_alerts;
};

/// The headline of `report`.
RunHeadline run_headline(const RunReport& report);

/// Writes `report` in `format` to `out`: Markdown (what a terminal or a pull request shows), one
/// self-contained HTML page with its charts, or JSON (every figure, the findings' sentences, the
/// schema and tool version).
void render_run_report(const RunReport& report, ReportFormat format, std::ostream& out);

/// The JSON document of `report` ("kind": "recompdiag.report").
nlohmann::json run_report_json(const RunReport& report);

}  // namespace recompdiag::reports
