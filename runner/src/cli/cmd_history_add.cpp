// `recompdiag history add --commit ID RUN...`: one run (or one job's rank files) into the store.

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/history_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/history.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/runner/history_store.h"

namespace recompdiag::runner::cli {

namespace {

struct HistoryAdd {
  std::string db;
  std::string commit;
  std::string branch;
  std::vector<std::string> labels;  // K=V
  std::vector<std::string> runs;
};

std::map<std::string, std::string> parse_labels(const std::vector<std::string>& items) {
  std::map<std::string, std::string> labels;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || key.empty() || key.find_first_of(",= ") != std::string::npos ||
        item.find_first_of(",", eq) != std::string::npos) {
      throw InputError("--label must be KEY=VALUE without commas, got '" + item + "'");
    }
    if (labels.count(key)) throw InputError("--label " + key + " is given twice");
    labels[key] = item.substr(eq + 1);
  }
  return labels;
}

}  // namespace

void add_history_add_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<HistoryAdd>();
  CLI::App* cmd = app.add_subcommand(
      "add",
      "Record one run (or one data-parallel job's rank files) of a commit in the history store: "
      "per phase its steady median with an interval, its step count and its exact counts; the "
      "compile ledger's totals; the recompiles' causes with their frames; the host, torch "
      "version and config. Keeps the run file's path, not its steps. Exit 0; 2 bad input (a "
      "commit already recorded with the same labels is never overwritten)");
  add_db_flag(*cmd, state->db);
  cmd->add_option("--commit", state->commit, "The commit (or build) the run measured")->required();
  cmd->add_option("--branch", state->branch, "Its branch");
  cmd->add_option("--label", state->labels,
                  "KEY=VALUE (repeatable): which series the run belongs to, e.g. job=hf; runs "
                  "with other labels are other series");
  cmd->add_option("RUN", state->runs,
                  "The run file, or the job's rank files: files, a directory or a quoted glob")
      ->required();
  cmd->callback([state, &ctx] {
    const std::map<std::string, std::string> labels = parse_labels(state->labels);
    if (state->commit.empty()) throw InputError("--commit must not be empty");
    // Read the run before the store is touched: a file that is not a run changes nothing.
    const RunReport report = report_run_paths(expand_run_paths(state->runs, "RUN"));
    HistoryRun run = history_run(report.run);
    run.commit = state->commit;
    run.branch = state->branch;
    run.labels = labels;
    run.path = std::filesystem::absolute(report.paths.front()).string();
    const auto store = HistoryStore::open(state->db);
    const int64_t id = store->add(run);
    std::cout << "recorded run " << id << ": commit " << run.commit
              << (run.series_key().empty() ? "" : " [" + run.series_key() + "]") << ", "
              << run.phases.size() << " phase(s), " << run.steps << " steps, " << run.causes.size()
              << " cause(s) of recompiles, in " << store->describe() << "\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::runner::cli
