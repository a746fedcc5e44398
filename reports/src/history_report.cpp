// A run history as one HTML page: the series over the commits, their change points and causes.

#include "recompdiag/reports/history_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "detail/format.h"
#include "detail/html_style.h"
#include "detail/svg.h"
#include "recompdiag/core/recompile_cause.h"
#include "recompdiag/core/version.h"

namespace recompdiag::reports {

namespace {

using detail::Frame;
using detail::html_escape;
using detail::num;

constexpr const char* kPoint = "#1f6fb4";
constexpr const char* kRegression = "#c8283a";
constexpr const char* kImprovement = "#2a9d3a";
constexpr const char* kUnsure = "#8a93a3";

const char* color_of(const ChangePoint& cp) {
  if (!cp.significant) return kUnsure;
  return cp.regression ? kRegression : kImprovement;
}

std::vector<const HistoryChange*> changes_of(const HistoryReport& r, const HistorySeries& s) {
  std::vector<const HistoryChange*> out;
  for (const HistoryChange& c : r.changes) {
    if (c.change.series == s.name) out.push_back(&c);
  }
  return out;
}

std::string short_commit(const std::string& commit) { return commit.substr(0, 10); }

// One series over the commits: a point per run (its interval for a median), the level of each
// segment, a dashed line at each change point.
void series_chart(const HistoryReport& r, const HistorySeries& s, std::ostream& out) {
  Frame f;
  f.height = 240;
  f.bottom = 56;
  f.x_lo = -0.5;
  f.x_hi = static_cast<double>(s.values.size()) - 0.5;
  double lo = *std::min_element(s.values.begin(), s.values.end());
  double hi = *std::max_element(s.values.begin(), s.values.end());
  if (s.is_time()) {
    for (size_t i = 0; i < s.runs.size(); ++i) {
      for (const HistoryPhase& p : s.runs[i]->phases) {
        if (p.phase == s.phase) {
          lo = std::min(lo, p.low_ms);
          hi = std::max(hi, p.high_ms);
        }
      }
    }
    lo = std::max(0.0, lo - 0.05 * (hi - lo));
  } else {
    lo = 0.0;
  }
  if (!(hi > lo)) hi = lo + 1.0;
  f.y_lo = lo;
  f.y_hi = hi + 0.08 * (hi - lo);
  detail::open_svg(f, s.name + " over " + std::to_string(s.values.size()) + " commits", out);
  detail::y_axis(f, detail::linear_ticks(f.y_lo, f.y_hi, 5), s.is_time() ? "ms" : "count", out);
  // Commit labels: every k-th, so that they do not overlap.
  const size_t every = std::max<size_t>(1, s.values.size() / 14 + 1);
  for (size_t i = 0; i < s.values.size(); i += every) {
    out << "<text x=\"" << num(f.x(static_cast<double>(i))) << "\" y=\"" << f.plot_bottom() + 15
        << "\" text-anchor=\"middle\" class=\"muted\">"
        << html_escape(short_commit(s.runs[i]->commit)) << "</text>\n";
  }
  out << "<text x=\"" << (f.left + f.width - f.right) / 2 << "\" y=\"" << f.height - 6
      << "\" text-anchor=\"middle\">commit (oldest first)</text>\n";
  // Levels and change points.
  const std::vector<const HistoryChange*> cps = changes_of(r, s);
  std::vector<size_t> bounds = {0};
  for (const HistoryChange* c : cps) bounds.push_back(c->change.index);
  bounds.push_back(s.values.size());
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    double sum = 0.0;
    for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) sum += s.values[i];
    const double level = sum / static_cast<double>(bounds[k + 1] - bounds[k]);
    out << "<line x1=\"" << num(f.x(static_cast<double>(bounds[k]) - 0.4)) << "\" x2=\""
        << num(f.x(static_cast<double>(bounds[k + 1]) - 0.6)) << "\" y1=\"" << num(f.y(level))
        << "\" y2=\"" << num(f.y(level)) << "\" stroke=\"#8a93a3\" stroke-width=\"2\"/>\n";
  }
  for (const HistoryChange* c : cps) {
    const double x = f.x(static_cast<double>(c->change.index) - 0.5);
    const char* color = color_of(c->change);
    out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << f.top << "\" y2=\""
        << f.plot_bottom() << "\" stroke=\"" << color
        << "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n"
        << "<text x=\"" << num(x + 4) << "\" y=\"" << f.top + 12 << "\" fill=\"" << color << "\">"
        << html_escape(short_commit(c->change.commit)) << (c->acknowledged ? " (acknowledged)" : "")
        << "</text>\n";
  }
  for (size_t i = 0; i < s.values.size(); ++i) {
    const double x = f.x(static_cast<double>(i));
    if (s.is_time()) {
      for (const HistoryPhase& p : s.runs[i]->phases) {
        if (p.phase != s.phase) continue;
        out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.y(p.low_ms))
            << "\" y2=\"" << num(f.y(p.high_ms)) << "\" stroke=\"" << kPoint
            << "\" stroke-opacity=\"0.5\"/>\n";
      }
    }
    out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(f.y(s.values[i]))
        << "\" r=\"3.5\" fill=\"" << kPoint << "\"><title>" << html_escape(s.runs[i]->commit)
        << ": " << detail::printf_string("%.4g", s.values[i]) << "</title></circle>\n";
  }
  out << "</svg>\n";
}

std::string size_words(const HistoryChange& c) {
  const ChangePoint& cp = c.change;
  if (!c.time) {
    return detail::printf_string("%.0f", cp.before) + " &rarr; " +
           detail::printf_string("%.0f", cp.after) + " (exact)";
  }
  return detail::printf_string("%.4g", cp.before) + " &rarr; " +
         detail::printf_string("%.4g", cp.after) + " ms, " +
         detail::printf_string("%.3f", cp.ratio) + "&times; (95% CI " +
         detail::printf_string("%.3f", cp.low) + "&ndash;" +
         (std::isinf(cp.high) ? std::string("&infin;") : detail::printf_string("%.3f", cp.high)) +
         ")";
}

// The links to the runs on both sides of a change point: "c08 -> c09".
std::string run_links(const HistoryReport& r, const ChangePoint& cp) {
  const HistorySeries* s = nullptr;
  for (const HistorySeries& x : r.series) {
    if (x.name == cp.series) s = &x;
  }
  if (!s || cp.index == 0 || cp.index >= s->runs.size()) return "";
  std::string runs;
  for (size_t i : {cp.index - 1, cp.index}) {
    const auto link = r.run_links.find(s->runs[i]->id);
    const std::string label = html_escape(short_commit(s->runs[i]->commit));
    runs += (runs.empty() ? "" : " &rarr; ") +
            (link == r.run_links.end()
                 ? label
                 : "<a href=\"" + html_escape(link->second) + "\">" + label + "</a>");
  }
  return runs;
}

// Per commit, regressions nobody acknowledged first: its change points in a table, then the
// causes that came with them, once.
void change_list(const HistoryReport& r, std::ostream& out) {
  out << "<h2>Change points</h2>\n";
  if (r.changes.empty()) {
    out << "<p>No change point in any series.</p>\n";
    return;
  }
  for (const std::string& commit : history_change_commits(r.changes)) {
    size_t n = 0;
    bool failing = false;
    for (const HistoryChange& c : r.changes) {
      if (c.change.commit != commit) continue;
      ++n;
      failing = failing || (c.change.regression && !c.acknowledged);
    }
    out << "<h3>Commit <code>" << html_escape(commit) << "</code>: " << n << " change point"
        << (n == 1 ? "" : "s") << (failing ? ", a regression nobody acknowledged" : "")
        << "</h3>\n<table><tr><th>series</th><th>change</th><th>size</th><th>runs</th></tr>\n";
    for (const HistoryChange& c : r.changes) {
      if (c.change.commit != commit) continue;
      const ChangePoint& cp = c.change;
      out << "<tr><td>" << html_escape(cp.series) << "</td><td><b style=\"color:" << color_of(cp)
          << "\">" << cp.word() << "</b>" << (c.acknowledged ? " (acknowledged)" : "")
          << "</td><td>" << size_words(c) << "</td><td>" << run_links(r, cp) << "</td></tr>\n";
    }
    out << "</table>\n";
    const std::vector<const HistoryCause*> causes = history_commit_causes(r.changes, commit);
    if (!causes.empty()) {
      out << "<p>With it:</p><ul>\n";
      for (const HistoryCause* cause : causes) {
        out << "<li>" << html_escape(history_cause_words(*cause)) << "</li>\n";
      }
      out << "</ul>\n";
    }
    if (failing) {
      out << "<p class=\"muted\">Known or meant? <code>recompdiag history ack --commit "
          << html_escape(commit) << "</code></p>\n";
    }
  }
}

}  // namespace

void render_history_html(const HistoryReport& r, std::ostream& out) {
  size_t regressions = 0;
  for (const HistoryChange& c : r.changes) regressions += c.change.regression && !c.acknowledged;
  const size_t runs = r.series.empty() ? 0 : r.series.front().runs.size();
  out << "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>recompdiag "
         "history</title><style>"
      << detail::kHtmlStyle << "</style></head><body><main>\n";
  out << "<h1>recompdiag history: " << r.changes.size() << " change point"
      << (r.changes.size() == 1 ? "" : "s") << ", " << regressions << " regression"
      << (regressions == 1 ? "" : "s") << " not acknowledged</h1>\n";
  out << "<p class=\"muted\">" << html_escape(r.store) << "; " << r.series.size() << " series"
      << (runs ? ", " + std::to_string(runs) + " runs in the first" : std::string())
      << "; step-time change points by Apache Otava "
      << (r.otava_version.empty() ? "(not asked)" : html_escape(r.otava_version))
      << ", counts exactly.</p>\n";
  change_list(r, out);
  std::vector<std::string> unchanged;
  for (const HistorySeries& s : r.series) {
    if (!s.is_time() && changes_of(r, s).empty()) {
      unchanged.push_back(s.name + " (" + detail::printf_string("%.0f", s.values.back()) + ")");
      continue;
    }
    out << "<h2>" << html_escape(s.name) << "</h2>\n";
    series_chart(r, s, out);
  }
  if (!unchanged.empty()) {
    out << "<h2>Counts that never changed</h2><p>";
    for (size_t i = 0; i < unchanged.size(); ++i) {
      out << (i ? ", " : "") << html_escape(unchanged[i]);
    }
    out << "</p>\n";
  }
  out << "<p class=\"muted\">recompdiag " << kToolVersion << ".</p>\n</main></body></html>\n";
}

namespace {

// A change point's size in words: "0.77 -> 1.03 ms, 1.345x (95% CI 1.302-1.390, p < 0.001; 8 runs
// before, 6 after)", or a count's "1 -> 3 (exact; 6 runs at the new value)".
std::string size_text(const HistoryChange& c) {
  const ChangePoint& cp = c.change;
  using detail::printf_string;
  if (c.time) {
    return printf_string("%.4g", cp.before) + " -> " + printf_string("%.4g", cp.after) + " ms, " +
           printf_string("%.3f", cp.ratio) + "x (95% CI " + printf_string("%.3f", cp.low) + "-" +
           (std::isinf(cp.high) ? std::string("inf") : printf_string("%.3f", cp.high)) + ", p " +
           (cp.p < 0.001 ? std::string("< 0.001") : "= " + printf_string("%.3f", cp.p)) + "; " +
           std::to_string(cp.runs_before) + " runs before, " + std::to_string(cp.runs_after) +
           " after)";
  }
  return printf_string("%.0f", cp.before) + " -> " + printf_string("%.0f", cp.after) + " (exact; " +
         std::to_string(cp.runs_after) + " run" + (cp.runs_after == 1 ? "" : "s") +
         " at the new value)";
}

}  // namespace

std::string render_history_markdown(const HistoryReport& r) {
  std::ostringstream out;
  bool failing_any = false;
  for (const HistoryChange& c : r.changes) failing_any |= c.change.regression && !c.acknowledged;
  out << "### recompdiag history check: " << r.runs << " runs, " << r.series.size() << " series, "
      << r.changes.size() << " change point" << (r.changes.size() == 1 ? "" : "s") << " · "
      << (failing_any ? "**an unacknowledged regression** (exit 1)"
                      : "no unacknowledged regression")
      << "\n";
  for (const std::string& commit : history_change_commits(r.changes)) {
    std::vector<const HistoryChange*> here;
    bool failing = false;
    for (const HistoryChange& c : r.changes) {
      if (c.change.commit != commit) continue;
      here.push_back(&c);
      failing = failing || (c.change.regression && !c.acknowledged);
    }
    out << "\n**Commit `" << commit << "`**: " << here.size() << " change point"
        << (here.size() == 1 ? "" : "s") << (failing ? ", a regression nobody acknowledged" : "")
        << "\n";
    for (const HistoryChange* c : here) {
      const ChangePoint& cp = c->change;
      out << "- " << (cp.regression ? "**regression**" : cp.word()) << " in " << cp.series << ": "
          << size_text(*c) << (c->acknowledged ? "; acknowledged" : "") << "\n";
    }
    const std::vector<const HistoryCause*> causes = history_commit_causes(r.changes, commit);
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < causes.size() && i < kShown; ++i) {
      out << "- with it: " << history_cause_words(*causes[i]) << "\n";
    }
    if (causes.size() > kShown) {
      out << "- with it: " << causes.size() - kShown << " more cause"
          << (causes.size() - kShown == 1 ? "" : "s") << " (history check --json lists them)\n";
    }
    if (failing) out << "- known or meant? `recompdiag history ack --commit " << commit << "`\n";
  }
  if (r.changes.empty()) out << "\nNo change point in any series.\n";
  out << "\nStore: " << r.store << "; step-time change points by Apache Otava "
      << (r.otava_version.empty() ? "(not asked: no series long enough)"
                                  : r.otava_version + " (E-divisive, t-test)")
      << ", counts exactly.\n";
  return out.str();
}

std::vector<std::string> history_change_commits(const std::vector<HistoryChange>& changes) {
  std::vector<std::string> commits;
  for (int pass = 0; pass < 2; ++pass) {
    for (const HistoryChange& c : changes) {
      const bool failing = c.change.regression && !c.acknowledged;
      if ((pass == 0) != failing) continue;
      if (std::find(commits.begin(), commits.end(), c.change.commit) == commits.end()) {
        commits.push_back(c.change.commit);
      }
    }
  }
  return commits;
}

std::vector<const HistoryCause*> history_commit_causes(const std::vector<HistoryChange>& changes,
                                                       const std::string& commit) {
  std::vector<std::string> seen;
  std::vector<const HistoryCause*> out;
  for (const HistoryChange& c : changes) {
    if (c.change.commit != commit) continue;
    for (const HistoryCause& cause : c.change.new_causes) {
      if (std::find(seen.begin(), seen.end(), cause.key()) != seen.end()) continue;
      seen.push_back(cause.key());
      out.push_back(&cause);
    }
  }
  return out;
}

std::string history_cause_words(const HistoryCause& c) {
  std::string words;
  if (c.kind == "guard") {
    words = "guard " + c.subject + " failed on " + c.frame;
    for (const RecompileCause& known : recompile_causes()) {
      if (c.cause == known.key) words += std::string(": ") + known.what + "; fix: " + known.fix;
    }
  } else {
    words = (c.frame.empty() ? std::string("a compile") : c.frame + " compiled") + ": " + c.subject;
  }
  return words + " (" + std::to_string(c.count) + "x)";
}

}  // namespace recompdiag::reports
