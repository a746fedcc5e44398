// `recompdiag history check`: the change points of every series, and the gate of them.

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/history_flags.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/runner/history_check.h"

namespace recompdiag::runner::cli {

namespace {

struct HistoryCheckCommand {
  std::string db;
  std::string since;
  std::string json;
  HistoryCheckOptions options;
};

}  // namespace

void add_history_check_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<HistoryCheckCommand>();
  HistoryCheckOptions& o = state->options;
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Find the change points of every series of the history: the step-time medians' by Apache "
      "Otava's E-divisive (pip install apache-otava; --python), the exact counts' exactly. Each "
      "names its first commit, its series, its size with an interval, and for a count the "
      "guards and causes that appeared with it. Exit 1: a regression nobody acknowledged "
      "(history ack ID); 0 otherwise; 2 bad input");
  add_db_flag(*cmd, state->db);
  cmd->add_option("--since", state->since, "Only the runs from this commit's on");
  cmd->add_option("--json", state->json,
                  "Also write the change points as JSON to FILE, atomically (- : to stdout, "
                  "instead of the Markdown)")
      ->check(writable_file(true));
  add_python_flag(*cmd, o.otava);
  cmd->add_option("--max-pvalue", o.otava.max_pvalue,
                  "Otava's significance level for a step-time change point")
      ->capture_default_str();
  cmd->add_option("--window", o.otava.window_len, "Otava's sliding window, in runs")
      ->capture_default_str();
  cmd->callback([state, &ctx] {
    HistoryCheckOptions options = state->options;
    if (!state->since.empty()) options.since = state->since;
    options.validate();
    const auto store = HistoryStore::open(state->db);
    const HistoryCheck check = check_history(*store, options);
    if (state->json == "-") {
      std::cout << history_check_json(check).dump(2) << "\n";
    } else {
      if (!state->json.empty()) {
        reports::write_file_atomically(state->json, history_check_json(check).dump(2) + "\n");
      }
      std::cout << history_check_text(check);
    }
    std::cout.flush();
    ctx.exit_code = check.exit_code();
  });
}

}  // namespace recompdiag::runner::cli
