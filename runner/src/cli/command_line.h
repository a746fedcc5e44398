#pragma once
// What both `recompdiag` executables share: the app, a bench's --json flag, and parsing a command
// line into one of the commands with the shared exit codes. The front end (front_end.cpp) holds
// the runner's commands (commands.def) and links no LibTorch; recompdiag-trainer adds the commands
// that train.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"

namespace recompdiag::runner::cli {

/// The top-level app with its description and --version flag; the caller adds subcommands.
void describe_app(CLI::App& app);

/// A check for an output FILE option: refuses, while the flags are parsed and so before any run,
/// a path that cannot be written (reports::check_writable()). With `dash_is_stdout`, "-" passes
/// (the option's "-" means stdout).
CLI::Validator writable_file(bool dash_is_stdout);

/// A flag given in seconds, in whole milliseconds (rounded): its range is for the options'
/// validate() to check (`--turn-timeout` above 0, `--start-wait` from 0). Throws InputError only
/// for a value no count of milliseconds holds: not a number, or beyond a billion seconds.
int64_t milliseconds_of_flag(const std::string& flag, double seconds);

/// A bench's `--json FILE` flag (`-`: the JSON to stdout instead of the text), into `where`.
void add_bench_json_flag(CLI::App& bench, std::string& where);

/// Writes a bench's result where its --json flag said: one line on stdout for "-", else FILE,
/// indented and replaced atomically. Throws InputError when FILE cannot be written.
void write_bench_json(const std::string& where, const nlohmann::ordered_json& result);

/// Parses `argv` with `app` and runs the chosen subcommand. Returns the process's exit code: the
/// command's own (ctx.exit_code), 0 for --help and --version, 2 with one "recompdiag: error:" line
/// on stderr for a flag that does not parse, and report_error()'s code for what the command
/// throws. Never throws.
int run_command_line(CLI::App& app, CommandContext& ctx, int argc, char** argv);

}  // namespace recompdiag::runner::cli
