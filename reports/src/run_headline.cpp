// The first screen of a run's report in words (run_report.h): its title and its findings.

#include <string>

#include "detail/format.h"
#include "recompdiag/core/health.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/run_report.h"

namespace recompdiag::reports {

namespace {

using detail::plural;

// What the title says of torch.compile and the other compilers, in order.
std::vector<std::string> title_parts(const CompileFindings& c) {
  std::vector<std::string> parts;
  if (!c.frames.empty()) {
    int64_t recompiles = 0;
    for (const FrameFinding& f : c.frames) recompiles += f.recompiles;
    parts.push_back(
        "torch.compile recompiled " +
        plural(static_cast<int64_t>(c.frames.size()), "frame", "frames") + " " +
        (recompiles == 1 ? std::string("once") : std::to_string(recompiles) + " times"));
  }
  if (c.eager) {
    parts.push_back(
        "compiled frames ran eagerly" +
        (c.eager->steps > 0 ? " from step " + std::to_string(c.eager->first_step) : std::string()));
  }
  int64_t breaks = 0;
  for (const GraphBreakFinding& g : c.graph_breaks) breaks += g.count;
  if (breaks > 0) parts.push_back(plural(breaks, "graph break", "graph breaks"));
  for (const OtherCompileFinding& o : c.other_compiles) {
    parts.push_back(other_compile_sentence(o).substr(0, other_compile_sentence(o).find(" (")));
  }
  return parts;
}

}  // namespace

RunHeadline run_headline(const RunReport& report) {
  const RunAnalysis& r = report.run;
  RunHeadline h;
  h.findings = compile_finding_lines(r.compile);
  std::vector<std::string> compile_alerts;
  int64_t other_rules = 0;
  for (const AlertGroup& g : r.alert_groups) {
    if (is_compile_rule(g.rule)) {
      compile_alerts.push_back(
          "`" + g.rule + "` " +
          (g.count == 1 ? std::string("once") : std::to_string(g.count) + " times"));
    } else {
      h.findings.push_back(alert_group_sentence(g));
      ++other_rules;
    }
  }
  h.compile_alerts = detail::joined(compile_alerts);

  std::vector<std::string> parts = title_parts(r.compile);
  if (other_rules > 0) {
    parts.push_back(plural(other_rules, "other alert rule", "other alert rules") + " fired");
  }
  if (parts.empty()) {
    h.title = r.compile.observed ? "nothing recompiled after the first compile, and no alert"
                                 : "no compile and no alert recorded";
  } else {
    h.title = detail::joined(parts, "; ");
  }
  if (h.findings.empty()) {
    h.findings.push_back(r.compile.observed
                             ? "torch.compile compiled " +
                                   plural(r.compile.compiles, "region", "regions") +
                                   " and recompiled none; no health rule fired."
                             : "The run has no torch.compile section (its probe did not run) "
                               "and no compile event; no health rule fired.");
  }
  return h;
}

}  // namespace recompdiag::reports
