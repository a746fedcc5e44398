#include "recompdiag/reports/renderer.h"

#include "recompdiag/core/error.h"

namespace recompdiag::reports {

const char* to_string(ReportFormat format) {
  switch (format) {
    case ReportFormat::kMarkdown:
      return "md";
    case ReportFormat::kHtml:
      return "html";
    case ReportFormat::kJson:
      return "json";
  }
  return "md";
}

ReportFormat parse_report_format(const std::string& name) {
  if (name == "md" || name == "markdown") return ReportFormat::kMarkdown;
  if (name == "html") return ReportFormat::kHtml;
  if (name == "json") return ReportFormat::kJson;
  throw InputError("unknown report format '" + name + "' (expected md, html or json)");
}

std::unique_ptr<Renderer> make_renderer(ReportFormat format) {
  switch (format) {
    case ReportFormat::kMarkdown:
      return std::make_unique<MarkdownRenderer>();
    case ReportFormat::kHtml:
      return std::make_unique<HtmlRenderer>();
    case ReportFormat::kJson:
      return std::make_unique<JsonRenderer>();
  }
  return std::make_unique<MarkdownRenderer>();
}

}  // namespace recompdiag::reports
