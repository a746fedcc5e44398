#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "detail/compile_ledger.h"
#include "detail/format.h"
#include "detail/headline.h"
#include "detail/job_report.h"
#include "detail/stretch_sections.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::md_cell;

std::string run_label(const RunAnalysis& r) {
  std::string label = "`" + detail::base_name(r.path) + "`";
  if (!r.header.mode.empty()) label += " (" + r.header.mode + ")";
  return label;
}

// Training quality: each measure over the pairs, then each switch of the first pair.
void write_convergence(const ConvergenceComparison& q, std::ostream& out) {
  if (q.pairs == 0) return;
  out << "\n**Training quality: " << to_string(q.verdict) << "** ("
      << (q.tested ? std::to_string(q.pairs) +
                         " seeded pairs, one-sided paired t-test on log B/A, "
                         "Holm-adjusted"
                   : std::string("1 pair: no test across seeds"))
      << ")\n\n";
  out << "| Measure | A | B | B/A | B worse / better pairs | p (Holm) | Regression |\n";
  out << "|---|---:|---:|---:|---:|---:|---|\n";
  for (const QualityMeasure& m : q.measures) {
    out << "| " << md_cell(m.label) << " | " << detail::loss(m.a) << " | " << detail::loss(m.b)
        << " | " << detail::change(1.0 + m.change) << " | " << m.worse_pairs << " / "
        << m.better_pairs << " | " << (q.tested ? detail::p_value(m.p) : "n/a") << " | "
        << detail::quality_cell(q, m) << " |\n";
  }
  const RunConvergence& a = q.a.front();
  const RunConvergence& b = q.b.front();
  for (size_t i = 0; i < a.switches.size() && i < b.switches.size(); ++i) {
    const SwitchConvergence& sa = a.switches[i];
    const SwitchConvergence& sb = b.switches[i];
    out << "\nSwitch to phase " << sa.to_phase << " (first pair): loss before "
        << detail::loss(sa.loss_before) << " / " << detail::loss(sb.loss_before) << ", after "
        << detail::loss(sa.loss_after) << " / " << detail::loss(sb.loss_after)
        << ", steps to recover " << sa.recovery_steps << " / " << sb.recovery_steps
        << " (A / B; -1: never)\n";
  }
}

// torch.compile's ledger per side and phase, where there is one.
void write_compile_ledger(const Comparison& c, std::ostream& out) {
  const std::vector<detail::LedgerColumn> cols = detail::compile_ledger_columns(c);
  if (cols.empty()) return;
  out << "\n**torch.compile ledger** (torch's own counters; times in ms):\n\n| per phase |";
  for (const auto& col : cols) out << " " << col.title << " |";
  out << "\n|---|";
  for (size_t k = 0; k < cols.size(); ++k) out << "---:|";
  out << "\n";
  for (size_t i = kCompiledLedgerFirst + 1; i < kCompiledSection.size; ++i) {
    out << "| " << kCompiledSection.fields[i].name << " |";
    for (const auto& col : cols) {
      out << " " << detail::printf_string("%.0f", detail::ledger_value(col, i)) << " |";
    }
    out << "\n";
  }
}

// What torch.compile did differently in A and B, frame by frame.
void write_compile_diff(const Comparison& c, std::ostream& out) {
  const std::vector<std::string> lines = compile_diff_lines(c.compile_diff);
  if (lines.empty()) return;
  out << "\n**torch.compile, A against B** (per compiled frame):\n";
  for (const std::string& line : lines) out << "- " << md_cell(line) << "\n";
}

}  // namespace

void MarkdownRenderer::render(const Comparison& c, std::ostream& out) const {
  const detail::Headline h = detail::headline(c);
  out << "### recompdiag: **" << detail::verdict_words(to_string(c.verdict)) << "** · " << h.gate
      << "\n\n";
  for (const std::string& line : h.finding) out << "- " << md_cell(line) << "\n";
  out << "\n| Question | Verdict | What it rests on |\n|---|---|---|\n";
  for (const detail::Question& q : h.questions) {
    out << "| " << md_cell(q.name) << " | **" << md_cell(q.verdict) << "** | "
        << md_cell(q.evidence) << " |\n";
  }
  out << "\n" << summary(c) << "\n\n";
  // The switches are the finding, in the table above already.
  const Story s = story(c);
  for (const std::string& line : s.counted_costs) out << "- " << md_cell(line) << "\n";
  out << "- " << md_cell(s.steady) << "\n\n";
  out << "A (baseline) = " << run_label(c.a) << ", B = " << run_label(c.b) << "; threshold "
      << detail::printf_string("%.1f%%", c.options.threshold * 100.0) << ", alpha "
      << detail::printf_string("%g", c.options.alpha) << "; " << detail::unit_sentence(c)
      << ".\n\n";

  out << "| Phase | A median ms | B median ms | B/A | "
      << detail::printf_string("%g%% CI", c.options.bootstrap.confidence * 100.0)
      << " | p (Holm) | detectable | A p95 ms | B p95 ms | all steps B/A | p (Holm) | Verdict |\n";
  out << "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : c.phases) {
    out << "| " << p.phase << " | " << detail::ms(p.median_a_ms) << " | "
        << detail::ms(p.median_b_ms) << " | " << detail::ratio(p.ratio.ratio) << " ("
        << detail::change(p.ratio.ratio) << ") | " << detail::ratio(p.ratio.low) << "-"
        << detail::ratio(p.ratio.high) << " | " << detail::p_value(p.p_holm) << " | "
        << detail::printf_string("%.1f%%", p.test.mde * 100.0) << " | " << detail::ms(p.p95_a_ms)
        << " | " << detail::ms(p.p95_b_ms) << " | " << detail::ratio(p.whole_test.ratio) << " ("
        << detail::change(p.whole_test.ratio) << ") | " << detail::p_value(p.whole_p_holm) << " | "
        << detail::verdict_words(to_string(p.verdict)) << (p.whole_decides ? " (all steps)" : "")
        << (p.counted_decides ? " (counted cost)" : "")
        << (p.compile_time_decides ? " (compile time)" : "") << " |\n";
  }

  const std::string busy = gpu_busy_sentence(c);
  if (!busy.empty()) out << "\n" << busy << ".\n";

  if (!c.count_changes.empty()) {
    out << "\n**Counts compared exactly**:\n";
    for (const auto& cc : c.count_changes) {
      out << "- " << count_change_line(cc) << (cc.fails ? " (fails the gate: --fail-on)" : "")
          << "\n";
    }
  }
  if (!c.switches.empty()) {
    out << "\n| Switch to phase | A recompile tax s (compile) | A steps to recover | "
           "B recompile tax s (compile) | B steps to recover |\n";
    out << "|---|---:|---:|---:|---:|\n";
    for (const auto& s : c.switches) {
      out << "| " << s.to_phase << " | " << detail::seconds(s.tax_s_a) << " ("
          << detail::seconds(s.compile_s_a) << ") | " << s.recovery_steps_a << " | "
          << detail::seconds(s.tax_s_b) << " (" << detail::seconds(s.compile_s_b) << ") | "
          << s.recovery_steps_b << " |\n";
    }
  }

  write_compile_diff(c, out);
  write_compile_ledger(c, out);
  detail::write_stretches_markdown(c.a, "A", out);
  detail::write_stretches_markdown(c.b, "B", out);
  if (c.job_a) detail::write_job_markdown(*c.job_a, "A", out);
  if (c.job_b) detail::write_job_markdown(*c.job_b, "B", out);

  if (!c.a.outcome.final_head_losses.empty() || !c.b.outcome.final_head_losses.empty()) {
    out << "\n**Final loss per head**: A " << detail::losses(c.a.outcome.final_head_losses)
        << "; B " << detail::losses(c.b.outcome.final_head_losses) << "\n";
  }
  write_convergence(c.convergence, out);

  if (!c.caveats.empty()) {
    out << "\n**Warnings**\n";
    for (const std::string& w : warnings(c)) out << "- " << md_cell(w) << "\n";
  }
}

}  // namespace recompdiag::reports
