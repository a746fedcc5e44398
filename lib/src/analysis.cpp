// analyze_run(): gathers the run's compiles and alerts, then runs the parts in
// detail/analysis_parts.h in order (phases, switches, slow stretches, outcome, chart).
#include "recompdiag/core/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>

#include "detail/analysis_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

// Compile events and alerts (alert events, and alerts carried only on steps), in step order.
void collect_compiles_and_alerts(const ColumnarRun& run, RunAnalysis& out) {
  for (const EventRecord& e : run.events) {
    if (e.kind == EventKind::kCompile) out.compiles.push_back({e.step, e.phase, e.reason});
    if (e.kind == EventKind::kAlert) {
      std::string rule =
          e.detail.is_object() && e.detail.contains("rule") && e.detail["rule"].is_string()
              ? e.detail["rule"].get<std::string>()
              : std::string("alert");
      out.alerts.push_back({e.step, e.phase, rule, e.reason});
    }
  }
  std::set<std::pair<int64_t, std::string>> from_events;
  for (const auto& a : out.alerts) from_events.insert({a.step, a.rule});
  for (const auto& [index, rule] : run.steps.alerts()) {
    const int64_t step = run.steps.step(index);
    if (!from_events.count({step, rule}))
      out.alerts.push_back({step, run.steps.phase(index), rule, ""});
  }
  std::stable_sort(out.alerts.begin(), out.alerts.end(),
                   [](const AlertInstance& x, const AlertInstance& y) { return x.step < y.step; });
}

}  // namespace

std::optional<size_t> find_phase(const RunAnalysis& analysis, int phase) {
  for (size_t i = 0; i < analysis.phases.size(); ++i) {
    if (analysis.phases[i].phase == phase) return i;
  }
  return std::nullopt;
}

RunAnalysis analyze_run(const RunFile& run, const AnalysisOptions& o) {
  return analyze_run(to_columnar(run), o);
}

void AnalysisOptions::validate() const {
  require_at_least("AnalysisOptions::warmup_window", warmup_window, 1);
  require_in_range("AnalysisOptions::warmup_tolerance", warmup_tolerance, 0.0, HUGE_VAL, false,
                   true);
  require_in_range("AnalysisOptions::max_warmup_fraction", max_warmup_fraction, 0.0, 1.0, false,
                   false);
  require_in_range("AnalysisOptions::slow_factor", slow_factor, 1.0, HUGE_VAL, false, true);
  require_at_least("AnalysisOptions::stretch_gap", stretch_gap, 0);
  require_at_least("AnalysisOptions::switch_window_before", switch_window_before, 0);
  require_at_least("AnalysisOptions::switch_window_after", switch_window_after, 0);
  require_at_least("AnalysisOptions::loss_window", loss_window, 1);
  if (chart_points == 0) throw InputError("AnalysisOptions::chart_points must be >= 1, got 0");
}

RunAnalysis analyze_run(const ColumnarRun& run, const AnalysisOptions& o) {
  o.validate();
  RunAnalysis out;
  out.path = run.path;
  out.header = run.header;
  out.summary = run.summary;
  const StepColumns& steps = run.steps;
  out.steps = static_cast<int64_t>(steps.size());

  for (const SkippedLine& s : run.skipped) {
    if (s.why != "blank line")
      out.warnings.push_back(run.path + ":" + std::to_string(s.line) + ": " + s.why);
  }
  if (!run.summary) out.warnings.push_back(run.path + ": no summary line; the run did not finish");
  if (run.summary && run.summary->failed()) {
    out.warnings.push_back(run.path + ": the run failed after " +
                           std::to_string(run.summary->steps) +
                           " steps (its summary says so: a data-parallel peer died or a "
                           "collective timed out)");
  }

  if (run.header.planted_slowdown_pct > 0.0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%g", run.header.planted_slowdown_pct);
    out.warnings.push_back(run.path + ": a slowdown of " + pct +
                           "% of the median step was planted in this run "
                           "(RECOMPDIAG_PLANT_SLOWDOWN, for `recompdiag calibrate`): its step "
                           "times are not the job's own");
  }
  collect_compiles_and_alerts(run, out);
  for (size_t i = 0; i < steps.size(); ++i) out.total_wall_s += steps.wall_ms(i) / 1000.0;

  const detail::EventIndex events(run.events);
  const detail::PhaseSteps groups = detail::group_by_phase(steps);
  std::vector<char> is_warmup(steps.size(), 0);
  out.phases = detail::analyze_phases(steps, groups, events, o, is_warmup);
  out.switches = detail::analyze_switches(steps, out.phases, groups, events, o);
  out.slow_stretches =
      detail::find_slow_stretches(run, out.phases, is_warmup, events, o, &out.slow_stretch_count);
  out.outcome = detail::training_outcome(run);
  out.chart = detail::chart_data(steps, is_warmup, events, o);
  out.compile = find_compile_findings(run, out.phases);
  out.alert_groups = group_alerts(out.alerts);
  return out;
}

std::optional<double> gpu_busy(const PhaseAnalysis& phase) {
  for (const SectionTotal& section : phase.steady_counts.sections.sections()) {
    if (std::string_view(section.name) != sections::kCupti || section.steps == 0) continue;
    for (const FieldTotal& f : section.fields) {
      if (std::string_view(f.name) != "kernel_ms") continue;
      // The steady steps with CUPTI records: all of them on a GPU run, where the section is on
      // every step. Their wall time is the steady steps' in proportion.
      const double steps_ms = phase.steady.total_s * 1000.0 * static_cast<double>(section.steps) /
                              static_cast<double>(std::max<int64_t>(phase.steady.n, section.steps));
      if (!(steps_ms > 0.0)) return std::nullopt;
      return f.sum / steps_ms;
    }
  }
  return std::nullopt;
}

std::vector<AlertGroup> group_alerts(const std::vector<AlertInstance>& alerts) {
  std::vector<AlertGroup> out;
  for (const AlertInstance& a : alerts) {
    auto g =
        std::find_if(out.begin(), out.end(), [&](const AlertGroup& x) { return x.rule == a.rule; });
    if (g == out.end()) {
      out.push_back({a.rule, 0, a.step, a.step, ""});
      g = out.end() - 1;
    }
    ++g->count;
    g->last_step = a.step;
    if (g->message.empty()) g->message = a.message;
  }
  return out;
}

}  // namespace recompdiag
