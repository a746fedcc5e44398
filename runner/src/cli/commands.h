#pragma once
// The runner's command table (commands.def): the commands that run without LibTorch, as data.
// Each command's ADD function declares its flags under a parent app and sets its callback; the
// callback stores its exit code in `ctx`. Bad input is reported by throwing recompdiag::InputError
// (run_command_line() prints it as one line and exits 2).

#include <CLI/CLI.hpp>

namespace recompdiag::runner::cli {

/// Shared between main and the subcommand callbacks.
struct CommandContext {
  int exit_code = 0;
};

/// When a runner command runs in the front end.
enum class RunsHere {
  kAlways,
  /// Only with `--a-cmd` or `--b-cmd` (`ab` of two commands); recompdiag-trainer's otherwise.
  kWithCommands,
};

/// One row of commands.def.
struct RunnerCommand {
  const char* group;  ///< "" or the group ("bench").
  const char* name;
  void (*add)(CLI::App& parent, CommandContext& ctx);
  RunsHere when;
};

#define RECOMPDIAG_RUNNER_COMMAND(GROUP, NAME, SOURCE, ADD, WHEN) \
  void ADD(CLI::App& parent, CommandContext& ctx);
#include "cli/commands.def"
#undef RECOMPDIAG_RUNNER_COMMAND

/// Every command of commands.def, in its order.
inline constexpr RunnerCommand kRunnerCommands[] = {
#define RECOMPDIAG_RUNNER_COMMAND(GROUP, NAME, SOURCE, ADD, WHEN) \
  {GROUP, NAME, &ADD, RunsHere::WHEN},
#include "cli/commands.def"
#undef RECOMPDIAG_RUNNER_COMMAND
};

/// The row that argv names (argv[1], and argv[2] under a group), or null.
const RunnerCommand* find_runner_command(int argc, char** argv);

/// Whether the command line names a runner command that runs here: kAlways, or kWithCommands
/// with --a-cmd or --b-cmd among the arguments.
bool runs_here(int argc, char** argv);

/// The commands the front end runs, for messages: "compare, ab --a-cmd/--b-cmd, bench compare".
std::string runner_command_list();

/// Declares on `app` every command of the table that is kAlways, and those that are kWithCommands
/// when `with_commands`, each under its group (add_group()) where it has one.
void add_runner_commands(CLI::App& app, CommandContext& ctx, bool with_commands);

/// The group `name` of `app` ("bench"), created with its description the first time.
CLI::App* add_group(CLI::App& app, const std::string& name);

}  // namespace recompdiag::runner::cli
