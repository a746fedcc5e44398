#pragma once
/// \file
/// Renderers of an A/B comparison: one interface, one implementation per format, each writing to
/// a stream it is given. Renderers only format what compare_runs() computed; they compute nothing.

#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "recompdiag/core/compare.h"

namespace recompdiag::reports {

/// Version of the JSON report's layout; bumped when a field changes meaning or disappears.
inline constexpr int kReportSchemaVersion = 1;

/// Output formats of a comparison report.
enum class ReportFormat { kMarkdown, kHtml, kJson };

/// "md", "html" or "json".
const char* to_string(ReportFormat format);

/// Parses "md" (or "markdown"), "html" or "json". Throws InputError for anything else.
ReportFormat parse_report_format(const std::string& name);

/// Formats a Comparison. Implementations are stateless: render() is const and thread-safe.
class Renderer {
 public:
  virtual ~Renderer() = default;
  /// Writes the report to `out`. Does not flush or close it.
  virtual void render(const Comparison& comparison, std::ostream& out) const = 0;
  /// The format this renderer writes.
  virtual ReportFormat format() const = 0;
};

/// Markdown: a short summary table fit for a pull-request comment.
class MarkdownRenderer final : public Renderer {
 public:
  void render(const Comparison& comparison, std::ostream& out) const override;
  ReportFormat format() const override { return ReportFormat::kMarkdown; }
};

/// HTML: one self-contained page (no network, no scripts): the verdict first, then tables and
/// inline SVG charts of step time, compile and cache-miss events, and loss per head.
class HtmlRenderer final : public Renderer {
 public:
  void render(const Comparison& comparison, std::ostream& out) const override;
  ReportFormat format() const override { return ReportFormat::kHtml; }
};

/// JSON: every figure of the comparison, with the report schema, tool version, build and both
/// run headers.
class JsonRenderer final : public Renderer {
 public:
  void render(const Comparison& comparison, std::ostream& out) const override;
  ReportFormat format() const override { return ReportFormat::kJson; }
};

/// The renderer of `format`; the caller owns it.
std::unique_ptr<Renderer> make_renderer(ReportFormat format);

/// The JSON document JsonRenderer writes.
nlohmann::json report_json(const Comparison& comparison);

}  // namespace recompdiag::reports
