// A run's slow stretches with their causes, as Markdown and as HTML (stretch_sections.h).
#include "detail/stretch_sections.h"

#include <algorithm>
#include <ostream>

#include "detail/format.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports::detail {

void write_stretches_markdown(const RunAnalysis& r, const std::string& name, std::ostream& out) {
  if (r.slow_stretches.empty()) return;
  out << "\n**Slow stretches in " << name << "** (" << r.slow_stretch_count << " found";
  if (r.slow_stretch_count > 3) out << ", costliest 3 shown";
  out << "):\n";
  // Stretches are in step order; show the three costliest.
  std::vector<const SlowStretch*> top;
  for (const auto& s : r.slow_stretches) top.push_back(&s);
  std::stable_sort(top.begin(), top.end(), [](const SlowStretch* x, const SlowStretch* y) {
    return x->extra_s > y->extra_s;
  });
  if (top.size() > 3) top.resize(3);
  for (const SlowStretch* s : top) out << "- " << stretch_sentence(*s) << "\n";
}

void write_stretches_html(const RunAnalysis& r, const std::string& name, double slow_factor,
                          std::ostream& out) {
  out << "<h3>" << name << ": " << r.slow_stretch_count << " slow stretch"
      << (r.slow_stretch_count == 1 ? "" : "es");
  if (static_cast<size_t>(r.slow_stretch_count) > r.slow_stretches.size()) {
    out << " (the " << r.slow_stretches.size() << " costliest shown)";
  }
  out << "</h3>\n";
  if (r.slow_stretches.empty()) {
    out << "<p class=\"muted\">No step ran over " << detail::printf_string("%g", slow_factor)
        << "x its phase's steady median.</p>\n";
    return;
  }
  out << "<ul>\n";
  for (const auto& s : r.slow_stretches)
    out << "<li>" << html_escape(stretch_sentence(s)) << "</li>\n";
  out << "</ul>\n";
}

}  // namespace recompdiag::reports::detail
