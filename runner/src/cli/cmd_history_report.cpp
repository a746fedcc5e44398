// `recompdiag history report --out DIR`: the history as an HTML page, with the reports of the
// runs at each change point.

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/history_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/history_report.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/reports/run_report.h"
#include "recompdiag/runner/history_check.h"

namespace recompdiag::runner::cli {

namespace {

struct HistoryReportCommand {
  std::string db;
  std::string out_dir = "recompdiag-history";
  HistoryCheckOptions options;
};

// The runs a reader of a change point wants to open: its first run and the one before it.
std::set<const HistoryRun*> runs_at_changes(const HistoryCheck& check) {
  std::set<const HistoryRun*> runs;
  for (const HistoryChange& c : check.changes) {
    for (const HistorySeries& s : check.series) {
      if (s.name != c.change.series || c.change.index >= s.runs.size()) continue;
      runs.insert(s.runs[c.change.index]);
      if (c.change.index > 0) runs.insert(s.runs[c.change.index - 1]);
    }
  }
  return runs;
}

}  // namespace

void add_history_report_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<HistoryReportCommand>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the history as one HTML page, DIR/history.html: each series over the commits with "
      "its change points (history check's) marked, the count changes with their causes, and "
      "links to the reports of the runs at each change (DIR/runs/ID.html, where the run file "
      "is still there); DIR/history.json holds the check. Exit 0; 2 bad input");
  add_db_flag(*cmd, state->db);
  cmd->add_option("--out", state->out_dir, "The directory to write to")->capture_default_str();
  add_python_flag(*cmd, state->options.otava);
  cmd->callback([state, &ctx] {
    const auto store = HistoryStore::open(state->db);
    const HistoryCheck check = check_history(*store, state->options);
    std::filesystem::create_directories(state->out_dir + "/runs");
    reports::HistoryReport page = history_report_of(check);
    for (const HistoryRun* run : runs_at_changes(check)) {
      if (!std::filesystem::exists(run->path)) continue;  // moved or cleaned up since
      const std::string name = "runs/" + std::to_string(run->id) + ".html";
      try {
        const RunReport report = report_run_paths({run->path});
        reports::write_file_atomically(state->out_dir + "/" + name, [&](std::ostream& out) {
          reports::render_run_report(report, reports::ReportFormat::kHtml, out);
        });
        page.run_links[run->id] = name;
      } catch (const InputError& e) {
        std::cerr << "recompdiag: warning: no report of run " << run->id << ": " << e.what()
                  << "\n";
      }
    }
    reports::write_file_atomically(state->out_dir + "/history.html", [&](std::ostream& out) {
      reports::render_history_html(page, out);
    });
    reports::write_file_atomically(state->out_dir + "/history.json",
                                   history_check_json(check).dump(2) + "\n");
    std::cout << history_check_text(check) << "\nreport: " << state->out_dir << "/history.html\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::runner::cli
