// One run's report in each format (run_report.h): the headline first, then phases, stretches,
// charts and the run itself.

#include "recompdiag/reports/run_report.h"

#include <ostream>

#include "detail/format.h"
#include "detail/html_charts.h"
#include "detail/html_style.h"
#include "detail/job_report.h"
#include "detail/run_json.h"
#include "detail/stretch_sections.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/compile_words.h"

namespace recompdiag::reports {

namespace {

using detail::html_escape;
using detail::md_cell;

// "`run.jsonl` (python)" in Markdown; without the backticks in HTML.
std::string run_name(const RunReport& report, bool markdown) {
  const std::string quote = markdown ? "`" : "";
  std::string name = quote + detail::base_name(report.run.path) + quote;
  if (!report.run.header.mode.empty()) name += " (" + report.run.header.mode + ")";
  return name;
}

// The run in one line: steps, how it ended, its wall time, device and torch.
std::string run_facts(const RunAnalysis& r) {
  std::string status = !r.summary                         ? "did not finish (no summary line)"
                       : r.summary->status == "completed" ? "completed"
                                                          : r.summary->status;
  return std::to_string(r.steps) + " steps, " + status + ", " + detail::seconds(r.total_wall_s) +
         " s of steps; device " + (r.header.device_used.empty() ? "?" : r.header.device_used) +
         ", torch " + (r.header.torch_version.empty() ? "?" : r.header.torch_version) +
         (r.header.host.empty() ? "" : ", host " + r.header.host);
}

// The GPU-busy column of the phase table, where a phase has CUPTI's records.
bool has_gpu_busy(const RunAnalysis& r) {
  for (const PhaseAnalysis& p : r.phases) {
    if (gpu_busy(p)) return true;
  }
  return false;
}

std::string busy_cell(const PhaseAnalysis& p) {
  const std::optional<double> b = gpu_busy(p);
  return b ? detail::percent(*b) : "n/a";
}

void markdown(const RunReport& report, std::ostream& out) {
  const RunAnalysis& r = report.run;
  const RunHeadline h = run_headline(report);
  out << "### recompdiag report: " << run_name(report, true) << " · " << h.title << "\n\n";
  for (const std::string& line : h.findings) out << "- " << md_cell(line) << "\n";
  if (!h.compile_alerts.empty()) {
    out << "\nCompile alerts, explained above: " << h.compile_alerts << ".\n";
  }
  const bool busy = has_gpu_busy(r);
  out << "\n| Phase | steps | warm-up steps | steady median ms | p95 ms | all steps s | share of "
         "the run |"
      << (busy ? " GPU busy |" : "") << "\n|---|---:|---:|---:|---:|---:|---:|"
      << (busy ? "---:|" : "") << "\n";
  for (const PhaseAnalysis& p : r.phases) {
    out << "| " << p.phase << " | " << p.all.n << " | " << p.warmup_steps << " | "
        << detail::ms(p.steady.median_ms) << " | " << detail::ms(p.steady.p95_ms) << " | "
        << detail::seconds(p.all.total_s) << " | "
        << detail::percent(r.total_wall_s > 0 ? p.all.total_s / r.total_wall_s : 0.0) << " |"
        << (busy ? " " + busy_cell(p) + " |" : "") << "\n";
  }
  if (busy) out << "\nGPU busy: kernel time over step time in the steady state (CUPTI).\n";
  detail::write_stretches_markdown(r, "the run", out);
  if (report.job) detail::write_job_markdown(*report.job, "the run", out);
  out << "\nRun: " << md_cell(run_facts(r)) << ".\n";
  if (!r.warnings.empty()) {
    out << "\n**Warnings**\n";
    for (const std::string& w : r.warnings) out << "- " << md_cell(w) << "\n";
  }
}

void html(const RunReport& report, std::ostream& out) {
  const RunAnalysis& r = report.run;
  const RunHeadline h = run_headline(report);
  const bool trouble =
      !r.compile.frames.empty() || r.compile.eager.has_value() || !r.alert_groups.empty();
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>recompdiag report: " << html_escape(run_name(report, false)) << "</title>\n<style>"
      << detail::kHtmlStyle << "</style></head><body><main>\n";
  out << "<header class=\"verdict " << (trouble ? "inconclusive" : "no_change") << "\"><h1>"
      << html_escape(run_name(report, false)) << "</h1>\n<p class=\"gate\">" << html_escape(h.title)
      << "</p>\n<ul class=\"story\">\n";
  for (const std::string& line : h.findings) out << "<li>" << detail::html_words(line) << "</li>\n";
  out << "</ul></header>\n";
  if (!h.compile_alerts.empty()) {
    out << "<p class=\"muted\">Compile alerts, explained above: "
        << detail::html_words(h.compile_alerts) << ".</p>\n";
  }
  detail::step_time_chart({&r}, out);
  out << "<p class=\"runs muted\">" << html_escape(run_facts(r)) << "</p>\n";

  const bool busy = has_gpu_busy(r);
  out << "<h2>Step time per phase</h2>\n<table><tr><th>phase</th><th>steps</th><th>warm-up "
         "steps</th><th>steady median ms</th><th>p95 ms</th><th>all steps s</th><th>share of "
         "the run</th>"
      << (busy ? "<th title=\"kernel time over step time in the steady state (CUPTI)\">GPU "
                 "busy</th>"
               : "")
      << "</tr>\n";
  for (const PhaseAnalysis& p : r.phases) {
    out << "<tr><td>" << p.phase << "</td><td>" << p.all.n << "</td><td>" << p.warmup_steps
        << "</td><td>" << detail::ms(p.steady.median_ms) << "</td><td>"
        << detail::ms(p.steady.p95_ms) << "</td><td>" << detail::seconds(p.all.total_s)
        << "</td><td>" << detail::percent(r.total_wall_s > 0 ? p.all.total_s / r.total_wall_s : 0.0)
        << "</td>" << (busy ? "<td>" + busy_cell(p) + "</td>" : "") << "</tr>\n";
  }
  out << "</table>\n";
  out << "<h2>Compiles and cache misses per step</h2>\n";
  detail::events_chart({&r}, out);
  out << "<h2>Slow stretches and their causes</h2>\n";
  detail::write_stretches_html(r, "The run", AnalysisOptions{}.slow_factor, out);
  if (report.job) detail::write_job_html(*report.job, "the run", out);
  out << "<h2>Loss</h2>\n";
  if (r.outcome.loss_recorded) {
    detail::loss_chart({&r}, out);
  } else {
    out << "<p class=\"muted\">The run recorded no loss.</p>\n";
  }
  out << "<h2>Alerts</h2>\n";
  if (r.alerts.empty()) out << "<p class=\"muted\">No health rule fired.</p>\n";
  out << "<ul>\n";
  size_t shown = 0;
  for (const AlertInstance& a : r.alerts) {
    if (++shown > 30) {
      out << "<li>&hellip; " << r.alerts.size() - 30 << " more in the JSON report</li>\n";
      break;
    }
    out << "<li>step " << a.step << " (phase " << a.phase << "): <b>" << html_escape(a.rule)
        << "</b>" << (a.message.empty() ? "" : " &ndash; " + html_escape(a.message)) << "</li>\n";
  }
  out << "</ul>\n";
  if (!r.warnings.empty()) {
    out << "<h2>Warnings</h2><ul class=\"warn\">\n";
    for (const std::string& w : r.warnings) out << "<li>" << html_escape(w) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<h2>Run</h2>\n<details><summary><code>" << html_escape(r.path)
      << "</code>, step timing: " << html_escape(r.header.step_timing) << "</summary><pre>"
      << html_escape(r.header.config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
      << "</pre></details>\n";
  out << "<p class=\"muted\">recompdiag " << kToolVersion << " (" << html_escape(kBuildInfo)
      << "), report schema " << kReportSchemaVersion << ".</p>\n</main></body></html>\n";
}

}  // namespace

nlohmann::json run_report_json(const RunReport& report) {
  const RunHeadline h = run_headline(report);
  return {{"schema", kReportSchemaVersion},
          {"kind", "recompdiag.report"},
          {"tool", "recompdiag"},
          {"tool_version", kToolVersion},
          {"build", kBuildInfo},
          {"runs", report.paths},
          {"title", h.title},
          {"findings", h.findings},
          {"compile_alerts", h.compile_alerts},
          {"run", detail::run_json(report.run)},
          {"job", report.job ? detail::job_json(*report.job) : nlohmann::json(nullptr)}};
}

void render_run_report(const RunReport& report, ReportFormat format, std::ostream& out) {
  switch (format) {
    case ReportFormat::kMarkdown:
      markdown(report, out);
      return;
    case ReportFormat::kHtml:
      html(report, out);
      return;
    case ReportFormat::kJson:
      out << run_report_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
      return;
  }
}

}  // namespace recompdiag::reports
