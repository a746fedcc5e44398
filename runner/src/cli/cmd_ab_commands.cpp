// `recompdiag ab --a-cmd ... --b-cmd ...` in the front end: two commands taking turns, compared and
// gated without LibTorch (the built-in modes are recompdiag-trainer's `ab`).

#include <iostream>

#include "cli/ab_flags.h"
#include "cli/commands.h"
#include "recompdiag/core/error.h"

namespace recompdiag::runner::cli {

void add_ab_commands_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<AbFlags>();
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "Run two commands that each train once and write a run file to {out} (your baseline and "
      "your change), taking turns step by step on one CPU, then compare them and write "
      "DIR/NAME.jsonl and DIR/report.{md,html,json}. The gate, as compare's: exit 0 no "
      "regression (inconclusive warns); 1 B regresses beyond the threshold with significance, "
      "or a --fail-on count grew; 2 bad input; 4 a side's run failed (no verdict)");
  add_ab_flags(*cmd, *flags, /*with_quiet=*/true);
  cmd->allow_extras();  // a built-in run's flag gets its own line, as in recompdiag-trainer
  cmd->callback([flags, cmd, &ctx] {
    if (!cmd->remaining().empty()) {
      // Not one of this form's flags: a built-in run's (recompdiag-trainer knows them), or a typo.
      throw InputError("ab --a-cmd/--b-cmd: " + cmd->remaining().front() +
                       " is not a flag of ab with two commands (a built-in run's flag configures "
                       "the built-in runs; pass it in the commands instead)");
    }
    ctx.exit_code = run_ab(ab_run_options(*flags, *cmd), std::cout, std::cerr);
  });
}

}  // namespace recompdiag::runner::cli
