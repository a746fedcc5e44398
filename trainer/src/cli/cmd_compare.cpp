// `recompdiag compare A.jsonl B.jsonl`: the A/B verdict a CI can gate on.

#include <future>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/reports/trace_writer.h"

namespace recompdiag::cli {

namespace {

struct CompareCommand {
  std::string a;
  std::string b;
  std::string format = "md";
  bool format_given = false;
  std::string out;
  double threshold_pct = 5.0;
  double alpha = 0.05;
  std::string trace;
};

// The format: --format when given, else the --out file's extension (.html, .json), else md.
reports::ReportFormat report_format(const CompareCommand& s) {
  if (!s.format_given && !s.out.empty()) {
    auto ends_with = [&](const std::string& ext) {
      return s.out.size() >= ext.size() &&
             s.out.compare(s.out.size() - ext.size(), ext.size(), ext) == 0;
    };
    if (ends_with(".html") || ends_with(".htm")) return reports::ReportFormat::kHtml;
    if (ends_with(".json")) return reports::ReportFormat::kJson;
  }
  return reports::parse_report_format(s.format);
}

CompareOptions to_options(const CompareCommand& s) {
  CompareOptions o;
  o.threshold = s.threshold_pct / 100.0;
  o.alpha = s.alpha;
  o.validate();
  return o;
}

}  // namespace

void add_compare_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<CompareCommand>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare run B against baseline run A: per-phase steady-state step time with a bootstrap "
      "interval and Mann-Whitney U, the recompile tax and what caused each slow stretch. Exit 0: "
      "no regression; 1: B regresses beyond the threshold with significance; 2: bad input");
  cmd->add_option("A", state->a, "Baseline run file (JSON Lines)")->required();
  cmd->add_option("B", state->b, "Run file compared against the baseline")->required();
  CLI::Option* format =
      cmd->add_option("--format", state->format,
                      "Report format: md, html or json (default: from --out's extension, else md)");
  cmd->add_option("--out", state->out, "Write the report to FILE (atomically) instead of stdout");
  cmd->add_option("--threshold", state->threshold_pct,
                  "Noise threshold in percent: smaller changes of a steady median never count")
      ->capture_default_str();
  cmd->add_option("--alpha", state->alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str();
  cmd->add_option("--trace", state->trace,
                  "Also write a Chrome trace-event JSON of both runs to FILE (opens in Perfetto)");
  cmd->callback([state, format, &ctx] {
    state->format_given = format->count() > 0;
    const CompareCommand& s = *state;
    const CompareOptions options = to_options(s);
    const auto renderer = reports::make_renderer(report_format(s));
    // The two files are independent; reading them on two threads halves the wait on big runs.
    auto read_b = std::async(std::launch::async, [&] { return read_run_file(s.b); });
    RunFile a = read_run_file(s.a);
    RunFile b = read_b.get();
    const Comparison c = compare_runs(a, b, options);
    for (const std::string& w : c.warnings) std::cerr << "recompdiag: warning: " << w << "\n";
    if (s.out.empty()) {
      renderer->render(c, std::cout);
      std::cout.flush();
    } else {
      reports::write_file_atomically(s.out, [&](std::ostream& out) { renderer->render(c, out); });
      std::cerr << "recompdiag: " << to_string(c.verdict) << "; wrote " << s.out << "\n";
    }
    if (!s.trace.empty()) {
      reports::write_file_atomically(
          s.trace, [&](std::ostream& out) { reports::write_chrome_trace(a, b, c, out); });
    }
    ctx.exit_code = exit_code_for(c.verdict);
  });
}

}  // namespace recompdiag::cli
