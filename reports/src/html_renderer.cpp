// The HTML report: one self-contained page (style, verdict, tables, charts, alerts, runs).
#include <ostream>
#include <string>
#include <vector>

#include "detail/compile_ledger.h"
#include "detail/format.h"
#include "detail/glossary.h"
#include "detail/headline.h"
#include "detail/html_charts.h"
#include "detail/html_style.h"
#include "detail/job_report.h"
#include "detail/stretch_sections.h"
#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::html_escape;

std::string counts_cell(bool present, int64_t v) { return present ? std::to_string(v) : "&ndash;"; }

void counts_table(const Comparison& c, std::ostream& out) {
  struct Column {
    std::string title;
    const ProbeCounts* counts;
  };
  std::vector<Column> cols;
  for (const auto* r : {&c.a, &c.b}) {
    const std::string name = r == &c.a ? "A" : "B";
    for (const auto& p : r->phases)
      cols.push_back({name + " phase " + std::to_string(p.phase), &p.counts});
    for (const auto& s : r->switches) {
      cols.push_back({name + " around switch to " + std::to_string(s.to_phase), &s.around});
    }
  }
  out << "<table><tr><th class=\"l\">signal</th>";
  for (const auto& col : cols) out << "<th>" << html_escape(col.title) << "</th>";
  out << "</tr>\n";
  for (const ProbeCountField& row : kProbeCountFields) {
    out << "<tr><td class=\"l\">" << row.label << "</td>";
    for (const auto& col : cols) {
      const ProbeCounts& counts = *col.counts;
      const bool measured = row.measured == nullptr || counts.*row.measured;
      out << "<td>" << counts_cell(measured, counts.*row.value) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"legend\">&ndash;: probe not available in that run (not zero).</p>\n";
}

// torch.compile's ledger per side and phase, where there is one.
void compile_ledger_table(const Comparison& c, std::ostream& out) {
  const std::vector<detail::LedgerColumn> cols = detail::compile_ledger_columns(c);
  if (cols.empty()) return;
  out << "<h2>torch.compile ledger</h2>\n<table><tr><th class=\"l\">per phase</th>";
  for (const auto& col : cols) out << "<th>" << html_escape(col.title) << "</th>";
  out << "</tr>\n";
  for (size_t i = kCompiledLedgerFirst + 1; i < kCompiledSection.size; ++i) {
    const Field<CompiledStats>& f = kCompiledSection.fields[i];
    out << "<tr><td class=\"l\" title=\"" << html_escape(f.help) << "\">" << f.name << "</td>";
    for (const auto& col : cols) {
      out << "<td>" << detail::printf_string("%.0f", detail::ledger_value(col, i)) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"legend\">torch's own compile counters, read by the Python package "
         "(docs/python.md): times in ms; hover a row for what it counts.</p>\n";
}

// Training quality: each measure over the pairs, the test and whether it regressed.
void quality_table(const ConvergenceComparison& q, std::ostream& out) {
  if (q.pairs == 0) return;
  out << "<p>Training quality: <b>" << to_string(q.verdict) << "</b> ("
      << (q.tested ? std::to_string(q.pairs) +
                         " seeded pairs; one-sided paired t-test on log B/A, Holm-adjusted"
                   : std::string("1 pair: no test across seeds"))
      << ")</p>\n<table><tr><th class=\"l\">measure</th><th>A</th><th>B</th><th>B/A</th>"
         "<th>B worse / better pairs</th><th>p (Holm)</th><th class=\"l\">regression</th></tr>\n";
  for (const QualityMeasure& m : q.measures) {
    out << "<tr><td class=\"l\">" << html_escape(m.label) << "</td><td>" << detail::loss(m.a)
        << "</td><td>" << detail::loss(m.b) << "</td><td>" << detail::change(1.0 + m.change)
        << "</td><td>" << m.worse_pairs << " / " << m.better_pairs << "</td><td>"
        << (q.tested ? detail::p_value(m.p) : "n/a") << "</td><td class=\"l\">"
        << detail::quality_cell(q, m) << "</td></tr>\n";
  }
  out << "</table>\n";
}

std::string run_line(const RunAnalysis& r) {
  std::string s = "<code>" + html_escape(r.path) + "</code>";
  if (!r.header.mode.empty()) s += " (" + html_escape(r.header.mode) + ")";
  s += ", " + std::to_string(r.steps) + " steps";
  return s;
}

// The first screen: the verdict and the gate, what changed and what it cost, one line per
// question with its own verdict, the step-time chart, and the runs compared.
void page_head(const Comparison& c, std::ostream& out) {
  const std::string verdict = to_string(c.verdict);
  const detail::Headline h = detail::headline(c);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>recompdiag: " << detail::verdict_words(verdict.c_str()) << "</title>\n<style>"
      << detail::kHtmlStyle << "</style></head><body><main>\n";

  out << "<header class=\"verdict " << verdict << "\"><h1>" << html_escape(h.title)
      << "</h1>\n<p class=\"gate\">" << html_escape(h.gate) << "</p>\n<ul class=\"story\">\n";
  for (const std::string& line : h.finding) out << "<li>" << detail::html_words(line) << "</li>\n";
  out << "</ul></header>\n";
  out << "<table class=\"questions\"><tr><th class=\"l\">question</th><th class=\"l\">verdict"
         "</th><th class=\"l\">what it rests on</th></tr>\n";
  for (const detail::Question& q : h.questions) {
    out << "<tr><td class=\"l\">"
        << (q.term.empty() ? html_escape(q.name)
                           : "<a href=\"#" + q.term + "\">" + html_escape(q.name) + "</a>")
        << "</td><td class=\"l v-" << q.css << "\">" << html_escape(q.verdict)
        << "</td><td class=\"l\">" << html_escape(q.evidence) << "</td></tr>\n";
  }
  out << "</table>\n";
  detail::step_time_chart({&c.a, &c.b}, out);
  out << "<p class=\"runs muted\">A (baseline): " << run_line(c.a)
      << " &middot; B: " << run_line(c.b) << " &middot; threshold "
      << detail::printf_string("%.1f%%", c.options.threshold * 100.0) << ", alpha "
      << detail::printf_string("%g", c.options.alpha) << " &middot; "
      << html_escape(detail::unit_sentence(c)) << "</p>\n";
  out << "<h2>The verdict in one sentence</h2>\n<p>" << html_escape(summary(c)) << "</p>\n";
  // The switches are the finding, on the first screen already.
  const Story s = story(c);
  out << "<ul>\n";
  for (const std::string& line : s.counted_costs) out << "<li>" << html_escape(line) << "</li>\n";
  out << "<li>" << html_escape(s.steady) << "</li>\n</ul>\n";
}

// The comparison's warnings, when it has any.
void warnings_section(const Comparison& c, std::ostream& out) {
  if (!c.caveats.empty()) {
    out << "<h2>Warnings</h2><ul class=\"warn\">\n";
    for (const std::string& w : warnings(c)) out << "<li>" << html_escape(w) << "</li>\n";
    out << "</ul>\n";
  }
}

// Step time per phase: steady state and all steps, tested, with each phase's verdict.
void phase_table(const Comparison& c, std::ostream& out) {
  out << "<h2>Step time per phase: <a href=\"#term-steady-state\">steady state</a>, and all "
         "steps</h2>\n"
         "<table><tr><th>phase</th><th>A steps "
         "(warm-up)</th><th>B steps (warm-up)</th><th>A median ms</th><th>B median ms</th>"
         "<th>B/A</th><th>"
      << detail::printf_string("%g%% CI", c.options.bootstrap.confidence * 100.0)
      << "</th><th>p (<a href=\"#term-holm\">Holm</a>)</th><th><a href=\"#term-detectable\">"
         "detectable</a></th><th>A p95 ms</th><th>B p95 ms</th>"
         "<th>all steps B/A</th><th>p (Holm)</th>"
         "<th class=\"l\">verdict</th></tr>\n";
  for (const auto& p : c.phases) {
    const PhaseAnalysis* pa = nullptr;
    const PhaseAnalysis* pb = nullptr;
    for (const auto& x : c.a.phases) {
      if (x.phase == p.phase) pa = &x;
    }
    for (const auto& x : c.b.phases) {
      if (x.phase == p.phase) pb = &x;
    }
    out << "<tr><td>" << p.phase << "</td><td>" << (pa ? pa->all.n : 0) << " ("
        << (pa ? pa->warmup_steps : 0) << ")</td><td>" << (pb ? pb->all.n : 0) << " ("
        << (pb ? pb->warmup_steps : 0) << ")</td><td>" << detail::ms(p.median_a_ms) << "</td><td>"
        << detail::ms(p.median_b_ms) << "</td><td>" << detail::ratio(p.ratio.ratio) << " ("
        << detail::change(p.ratio.ratio) << ")</td><td>" << detail::ratio(p.ratio.low) << "&ndash;"
        << detail::ratio(p.ratio.high) << "</td><td>" << detail::p_value(p.p_holm) << "</td><td>"
        << detail::printf_string("%.1f%%", p.test.mde * 100.0) << "</td><td>"
        << detail::ms(p.p95_a_ms) << "</td><td>" << detail::ms(p.p95_b_ms) << "</td><td>"
        << detail::ratio(p.whole_test.ratio) << " (" << detail::change(p.whole_test.ratio)
        << ")</td><td>" << detail::p_value(p.whole_p_holm) << "</td><td class=\"l v-"
        << to_string(p.verdict) << "\">" << detail::verdict_words(to_string(p.verdict))
        << (p.whole_decides ? " (all steps)" : "") << (p.counted_decides ? " (counted cost)" : "")
        << (p.compile_time_decides ? " (compile time)" : "") << "</td></tr>\n";
  }
  out << "</table>\n";
  const std::string busy = gpu_busy_sentence(c);
  if (!busy.empty()) out << "<p>" << html_escape(busy) << ".</p>\n";
}

// The counts that differ exactly between the sides.
void count_changes_section(const Comparison& c, std::ostream& out) {
  if (!c.count_changes.empty()) {
    out << "<h2>Counts compared exactly</h2>\n<ul>\n";
    for (const auto& cc : c.count_changes) {
      out << "<li>" << html_escape(count_change_line(cc))
          << (cc.fails ? " (fails the gate: --fail-on)" : "") << "</li>\n";
    }
    out << "</ul>\n";
  }
}

// What the counted events cost, per phase that has any.
void counted_costs_section(const Comparison& c, std::ostream& out) {
  bool costed = false;
  for (const CountedCost& cost : c.counted_costs) costed |= !cost.counts.empty();
  if (costed) {
    out << "<h2>What the <a href=\"#term-counted-cost\">counted events</a> "
           "cost</h2>\n<table><tr><th>phase</th><th "
           "class=\"l\">events</th><th>A s (steps)</th><th>B s (steps)</th><th>B &minus; A "
           "s</th><th>"
        << detail::printf_string("%g%% CI", c.options.bootstrap.confidence * 100.0)
        << "</th><th>of A's phase</th><th>p</th><th class=\"l\">verdict</th></tr>\n";
    for (const CountedCost& cost : c.counted_costs) {
      if (cost.counts.empty()) continue;
      out << "<tr><td>" << cost.phase << "</td><td class=\"l\">"
          << html_escape(cost_causes(cost, c)) << "</td><td>" << detail::seconds(cost.cost_s_a)
          << " (" << detail::printf_string("%.0f", cost.event_steps_a) << ")</td><td>"
          << detail::seconds(cost.cost_s_b) << " ("
          << detail::printf_string("%.0f", cost.event_steps_b) << ")</td><td><b>"
          << detail::printf_string("%+.3g", cost.difference_s) << "</b></td><td>"
          << detail::printf_string("%+.3g", cost.low_s) << " to "
          << detail::printf_string("%+.3g", cost.high_s) << "</td><td>"
          << detail::printf_string("%+.1f%%", cost.share * 100.0) << "</td><td>"
          << detail::p_value(cost.p) << "</td><td class=\"l v-" << to_string(cost.verdict) << "\">"
          << detail::verdict_words(to_string(cost.verdict)) << "</td></tr>\n";
    }
    out << "</table>\n<p class=\"legend\">Each side's time over its steady median at the steps "
           "that carry the events in either run, plus compile time between steps. A cost beyond "
           "the threshold decides the phase whatever the steady state says.</p>\n";
  }
}

// The recompile tax of each switch on both sides.
void switch_taxes(const Comparison& c, std::ostream& out) {
  if (!c.switches.empty()) {
    out << "<h2>Phase switch: the recompile tax</h2>\n<table><tr><th>switch to phase</th>"
           "<th>A tax s</th><th>A slow steps s</th><th>A compile s</th><th>A <a "
           "href=\"#term-recovery\">steps to recover</a></th>"
           "<th>B tax s</th><th>B slow steps s</th><th>B compile s</th><th>B steps to recover</th>"
           "<th>B &minus; A s</th></tr>\n";
    for (const auto& s : c.switches) {
      out << "<tr><td>" << s.to_phase << "</td><td><b>" << detail::seconds(s.tax_s_a)
          << "</b></td><td>" << detail::seconds(s.extra_s_a) << "</td><td>"
          << detail::seconds(s.compile_s_a) << "</td><td>" << s.recovery_steps_a << "</td><td><b>"
          << detail::seconds(s.tax_s_b) << "</b></td><td>" << detail::seconds(s.extra_s_b)
          << "</td><td>" << detail::seconds(s.compile_s_b) << "</td><td>" << s.recovery_steps_b
          << "</td><td>" << detail::printf_string("%+.3g", s.tax_s_difference) << "</td></tr>\n";
    }
    out << "</table>\n<p class=\"legend\">Slow steps: what the steps after the switch spent over "
           "the new phase's steady median until they were back at steady state. Compile: time the "
           "run's compile events at the switch report, spent between steps.</p>\n";
  }
}

// What torch.compile did differently in A and B: a row per compiled frame, then the graph breaks,
// caches and eager fallbacks that differ.
void compile_diff_section(const Comparison& c, std::ostream& out) {
  const CompileDiff& d = c.compile_diff;
  if (d.empty()) return;
  out << "<h2>torch.compile: what A and B compiled differently</h2>\n";
  if (!d.frames.empty()) {
    out << "<table><tr><th class=\"l\">frame</th><th>A recompiles</th><th>B recompiles</th>"
           "<th>A compile s</th><th>B compile s</th><th class=\"l\">limit reached</th>"
           "<th class=\"l\">guards that failed on one side only</th></tr>\n";
    for (const FrameDiff& f : d.frames) {
      std::string guards;
      for (const auto& [side, list] :
           {std::make_pair("A", &f.only_a), std::make_pair("B", &f.only_b)}) {
        for (const GuardFinding& g : *list) {
          guards += std::string(guards.empty() ? "" : "<br>") + side + ": <code>" +
                    html_escape(g.subject) + "</code>" +
                    (g.cause.empty() ? "" : " (" + html_escape(g.cause) + ")");
        }
      }
      const std::string limit = f.limit_a && f.limit_b ? "both"
                                : f.limit_a            ? "A"
                                : f.limit_b            ? "B"
                                                       : "";
      out << "<tr><td class=\"l\">" << detail::html_words(frame_name(f.function, f.file, f.line))
          << "</td><td>" << f.recompiles_a << "</td><td>" << f.recompiles_b << "</td><td>"
          << detail::seconds(f.compile_s_a) << "</td><td>" << detail::seconds(f.compile_s_b)
          << "</td><td class=\"l\">" << limit << "</td><td class=\"l\">" << guards
          << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  std::vector<std::string> rest = compile_diff_lines(d);
  rest.erase(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(d.frames.size()));
  if (!rest.empty()) {
    out << "<ul>\n";
    for (const std::string& line : rest) out << "<li>" << detail::html_words(line) << "</li>\n";
    out << "</ul>\n";
  }
}

// The charts, then each side's slow stretches with their causes and the probe counts.
void charts_and_causes(const Comparison& c, std::ostream& out) {
  out << "<h2>Compiles and cache misses per step</h2>\n";
  detail::events_chart({&c.a, &c.b}, out);

  out << "<h2>Slow stretches and their causes</h2>\n";
  detail::write_stretches_html(c.a, "A", c.options.analysis.slow_factor, out);
  detail::write_stretches_html(c.b, "B", c.options.analysis.slow_factor, out);
  if (c.job_a) detail::write_job_html(*c.job_a, "A", out);
  if (c.job_b) detail::write_job_html(*c.job_b, "B", out);

  out << "<h2>Probe signals per phase and around each switch</h2>\n";
  counts_table(c, out);
  compile_ledger_table(c, out);
}

// How training ended on each side, and the training-quality comparison.
void training_outcome(const Comparison& c, std::ostream& out) {
  out << "<h2>Training outcome</h2>\n";
  detail::loss_chart({&c.a, &c.b}, out);
  out << "<table><tr><th class=\"l\">run</th><th class=\"l\">finished</th><th>final loss</th>"
         "<th class=\"l\">final loss per head</th><th class=\"l\">loss jump per head at each "
         "switch</th></tr>\n";
  for (const auto* r : {&c.a, &c.b}) {
    out << "<tr><td class=\"l\">" << (r == &c.a ? "A" : "B") << "</td><td class=\"l\">"
        << (r->outcome.finished ? "yes" : "no") << "</td><td>"
        << detail::loss(r->outcome.final_loss) << "</td><td class=\"l\">"
        << detail::losses(r->outcome.final_head_losses) << "</td><td class=\"l\">";
    for (const auto& s : r->switches) {
      out << "phase " << s.to_phase << ": ";
      for (size_t h = 0; h < s.loss.head_jump.size(); ++h) {
        out << (h ? ", " : "") << detail::printf_string("%+.4g", s.loss.head_jump[h]);
      }
      out << " ";
    }
    out << "</td></tr>\n";
  }
  out << "</table>\n";
  quality_table(c.convergence, out);
}

// Each side's alerts, the first 30 of each.
void alerts_section(const Comparison& c, std::ostream& out) {
  out << "<h2>Alerts</h2>\n";
  for (const auto* r : {&c.a, &c.b}) {
    out << "<h3>" << (r == &c.a ? "A" : "B") << ": " << r->alerts.size() << " alert"
        << (r->alerts.size() == 1 ? "" : "s") << "</h3>\n";
    if (r->alerts.empty()) continue;
    out << "<ul>\n";
    size_t shown = 0;
    for (const auto& a : r->alerts) {
      if (++shown > 30) {
        out << "<li>&hellip; " << r->alerts.size() - 30 << " more in the JSON report</li>\n";
        break;
      }
      out << "<li>step " << a.step << " (phase " << a.phase << "): <b>" << html_escape(a.rule)
          << "</b>" << (a.message.empty() ? "" : " &ndash; " + html_escape(a.message)) << "</li>\n";
    }
    out << "</ul>\n";
  }
}

// The keys whose values differ between the runs' configurations.
void config_differences_section(const Comparison& c, std::ostream& out) {
  if (!c.config_differences.empty()) {
    out << "<h2>Configuration differences</h2>\n<table><tr><th class=\"l\">key</th><th "
           "class=\"l\">A</th><th class=\"l\">B</th></tr>\n";
    for (const auto& d : c.config_differences) {
      out << "<tr><td class=\"l\"><code>" << html_escape(d.key) << "</code></td><td class=\"l\">"
          << html_escape(d.a) << "</td><td class=\"l\">" << html_escape(d.b) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
}

// The terms the report uses, each defined once (glossary.h; docs/glossary.md says the same).
void terms_section(std::ostream& out) {
  out << "<h2>Terms</h2>\n<dl>\n";
  for (const detail::Term& t : detail::kTerms) {
    out << "<dt id=\"" << t.anchor << "\"><b>" << html_escape(t.name) << "</b></dt><dd>"
        << html_escape(t.definition) << "</dd>\n";
  }
  out << "</dl>\n";
}

// Each run's header and configuration, and the tool's version.
void runs_and_footer(const Comparison& c, std::ostream& out) {
  out << "<h2>Runs</h2>\n";
  for (const auto* r : {&c.a, &c.b}) {
    const auto& h = r->header;
    out << "<details><summary>" << (r == &c.a ? "A" : "B") << ": " << run_line(*r) << ", device "
        << html_escape(h.device_used) << ", torch " << html_escape(h.torch_version)
        << ", step timing: " << html_escape(h.step_timing) << "</summary><pre>"
        << html_escape(h.config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
        << "</pre></details>\n";
  }
  out << "<p class=\"muted\">recompdiag " << kToolVersion << " (" << html_escape(kBuildInfo)
      << "), report schema " << kReportSchemaVersion << ".</p>\n";
  out << "</main></body></html>\n";
}

}  // namespace

void HtmlRenderer::render(const Comparison& c, std::ostream& out) const {
  page_head(c, out);
  warnings_section(c, out);
  phase_table(c, out);
  count_changes_section(c, out);
  counted_costs_section(c, out);
  switch_taxes(c, out);
  compile_diff_section(c, out);
  charts_and_causes(c, out);
  training_outcome(c, out);
  alerts_section(c, out);
  config_differences_section(c, out);
  terms_section(out);
  runs_and_footer(c, out);
}

}  // namespace recompdiag::reports
