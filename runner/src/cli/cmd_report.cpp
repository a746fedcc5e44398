// `recompdiag report RUN...`: one run's report, or one job's, finding first.

#include <iostream>
#include <memory>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/reports/run_report.h"

namespace recompdiag::runner::cli {

namespace {

struct ReportCommand {
  std::vector<std::string> runs;  // files, directories, globs
  std::string html;
  std::string json;
};

}  // namespace

void add_report_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<ReportCommand>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Report on one run (or one data-parallel job's rank files): why it recompiled, cause by "
      "cause (the frame, the guard that failed, the cause and the fix), the recompile limit and "
      "the steps that then ran eagerly, graph breaks, compile caches, the other probes' alerts, "
      "then each phase's step time and the slow stretches. Markdown on stdout; exit 0, or 2 on "
      "bad input");
  cmd->add_option("RUN", state->runs,
                  "The run file, or the job's rank files: files, a directory (its *.jsonl) or a "
                  "quoted glob")
      ->required();
  cmd->add_option("--html", state->html,
                  "Also write the report as one self-contained HTML page (with its charts) to "
                  "FILE, atomically")
      ->check(writable_file(false));
  cmd->add_option("--json", state->json,
                  "Also write the report as JSON (every figure and finding) to FILE, atomically "
                  "(- : to stdout, instead of the Markdown)")
      ->check(writable_file(true));
  cmd->callback([state, &ctx] {
    const RunReport report = report_run_paths(expand_run_paths(state->runs, "RUN"));
    for (const std::string& w : report.run.warnings) {
      std::cerr << "recompdiag: warning: " << w << "\n";
    }
    if (!state->html.empty()) {
      reports::write_file_atomically(state->html, [&](std::ostream& out) {
        reports::render_run_report(report, reports::ReportFormat::kHtml, out);
      });
    }
    if (state->json == "-") {
      reports::render_run_report(report, reports::ReportFormat::kJson, std::cout);
    } else {
      if (!state->json.empty()) {
        reports::write_file_atomically(state->json, [&](std::ostream& out) {
          reports::render_run_report(report, reports::ReportFormat::kJson, out);
        });
      }
      reports::render_run_report(report, reports::ReportFormat::kMarkdown, std::cout);
    }
    std::cout.flush();
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::runner::cli
