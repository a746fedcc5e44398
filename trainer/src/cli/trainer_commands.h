#pragma once
// The commands of recompdiag-trainer that need LibTorch: train, the built-in ab, and the benches
// that train. Each add_* function declares one subcommand's flags on `app` and sets its callback;
// the callback stores its exit code in `ctx`. Bad input is reported by throwing
// recompdiag::InputError (run_command_line() prints it as one line and exits 2). The commands that
// run without LibTorch are the runner's (runner/src/cli/commands.def), added beside these.

#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"

namespace recompdiag::trainer::cli {

// What every command line shares (the runner's): the context, a bench's --json, an output file.
using runner::cli::add_bench_json_flag;
using runner::cli::CommandContext;
using runner::cli::writable_file;
using runner::cli::write_bench_json;

void add_train_command(CLI::App& app, CommandContext& ctx);
/// The built-in modes, a fault against its healthy twin, or two commands (the runner's form).
void add_ab_command(CLI::App& app, CommandContext& ctx);
void add_bench_overhead_command(CLI::App& bench, CommandContext& ctx);
void add_bench_gate_command(CLI::App& bench, CommandContext& ctx);
void add_bench_noise_command(CLI::App& bench, CommandContext& ctx);
void add_bench_diagnose_command(CLI::App& bench, CommandContext& ctx);

}  // namespace recompdiag::trainer::cli
