#pragma once
// The `recompdiag` subcommands. Each add_* function declares one subcommand's flags on `app` and
// sets its callback; the callback stores its exit code in `ctx`. Bad input is reported by throwing
// recompdiag::InputError (main prints it as one line and exits 2).

#include <CLI/CLI.hpp>

namespace recompdiag::trainer::cli {

/// Shared between main and the subcommand callbacks.
struct CommandContext {
  int exit_code = 0;
};

void add_train_command(CLI::App& app, CommandContext& ctx);
void add_ab_command(CLI::App& app, CommandContext& ctx);
/// The front end's `ab`: the two-command form alone (cmd_ab_commands.cpp), torch-free.
void add_ab_commands_command(CLI::App& app, CommandContext& ctx);
void add_compare_command(CLI::App& app, CommandContext& ctx);
/// `bench` is a group; each benchmark adds itself under it.
void add_bench_overhead_command(CLI::App& bench, CommandContext& ctx);
void add_bench_compare_command(CLI::App& bench, CommandContext& ctx);
void add_bench_gate_command(CLI::App& bench, CommandContext& ctx);
void add_bench_noise_command(CLI::App& bench, CommandContext& ctx);
void add_bench_diagnose_command(CLI::App& bench, CommandContext& ctx);

}  // namespace recompdiag::trainer::cli
