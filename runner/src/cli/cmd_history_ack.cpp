// `recompdiag history ack ID|--commit C`: change points known, so that they no longer fail a check.

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/history_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/runner/history_check.h"
#include "recompdiag/runner/history_store.h"

namespace recompdiag::runner::cli {

namespace {

struct HistoryAck {
  std::string db;
  std::string id;
  std::string commit;
  std::string note;
  HistoryCheckOptions options;
};

// The ids to acknowledge: `id` when it names a change point the check finds, or every change
// point of `commit` not acknowledged yet. Throws InputError when there is none.
std::vector<std::string> change_ids(HistoryStore& store, const HistoryAck& a) {
  if (!a.id.empty() && (a.id.rfind('@') == std::string::npos || a.id.back() == '@')) {
    throw InputError("history ack: '" + a.id +
                     "' is not a change point's id (SERIES@COMMIT, as "
                     "history check --json names it)");
  }
  const HistoryCheck check = check_history(store, a.options);
  std::vector<std::string> ids;
  for (const HistoryChange& c : check.changes) {
    if (!a.id.empty() && c.change.id == a.id) {
      if (c.acknowledged) throw InputError("history ack: " + a.id + " is acknowledged already");
      return {a.id};
    }
    if (!a.commit.empty() && c.change.commit == a.commit && !c.acknowledged) {
      ids.push_back(c.change.id);
    }
  }
  if (ids.empty()) {
    throw InputError("history ack: " +
                     (a.id.empty() ? "commit " + a.commit + " has no change point to acknowledge"
                                   : "no change point " + a.id) +
                     " in " + store.describe());
  }
  return ids;
}

}  // namespace

void add_history_ack_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<HistoryAck>();
  CLI::App* cmd = app.add_subcommand(
      "ack",
      "Acknowledge a change point (its id as history check --json names it: SERIES@COMMIT), or "
      "every change point of a commit (--commit), so that it no longer fails a check: a "
      "regression that was meant, or is being fixed. Exit 0; 2 bad input (nothing to "
      "acknowledge, or acknowledged already)");
  add_db_flag(*cmd, state->db);
  auto* id = cmd->add_option("ID", state->id, "The change point's id");
  auto* commit =
      cmd->add_option("--commit", state->commit, "Every change point of this commit instead");
  id->excludes(commit);
  cmd->add_option("--note", state->note, "Why, for whoever reads the history next");
  add_python_flag(*cmd, state->options.otava);
  cmd->callback([state, &ctx] {
    if (state->id.empty() && state->commit.empty()) {
      throw InputError("history ack needs a change point's ID or --commit");
    }
    const auto store = HistoryStore::open(state->db);
    for (const std::string& id : change_ids(*store, *state)) {
      store->acknowledge({id, state->note, ""});
      std::cout << "acknowledged " << id << "\n";
    }
    std::cout << "in " << store->describe() << "\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::runner::cli
