#include "cli/command_line.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>

#include "recompdiag/core/error.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/runner/exit_codes.h"

namespace recompdiag::runner::cli {

void describe_app(CLI::App& app) {
  app.description(
      "recompdiag: diagnose why training slows down after its step is recompiled, and prove the "
      "fix");
  app.set_version_flag("--version", std::string("recompdiag ") + recompdiag::kToolVersion);
  app.require_subcommand(1);
}

CLI::Validator writable_file(bool dash_is_stdout) {
  return CLI::Validator(
      [dash_is_stdout](const std::string& path) -> std::string {
        if (dash_is_stdout && path == "-") return {};
        // The user's input fails the flag (exit 2); IoError (no room for even an empty file)
        // leaves the parse and exits as the environment's failure, as a write would.
        try {
          reports::check_writable(path);
        } catch (const InputError& e) {
          return e.what();
        }
        return {};
      },
      "FILE");
}

int64_t milliseconds_of_flag(const std::string& flag, double seconds) {
  if (!(std::fabs(seconds) < 1e9)) {
    throw InputError(flag + " must be a number of seconds below 1e9, got " +
                     std::to_string(seconds));
  }
  return std::llround(seconds * 1000.0);
}

void add_bench_json_flag(CLI::App& bench, std::string& where) {
  bench
      .add_option("--json", where,
                  "Write the result to FILE as JSON (- : to stdout, instead of the text)")
      ->check(writable_file(true));
}

void write_bench_json(const std::string& where, const nlohmann::ordered_json& result) {
  if (where == "-") {
    std::cout << result.dump() << "\n";
  } else {
    reports::write_file_atomically(where, result.dump(2) + "\n");
  }
}

int run_command_line(CLI::App& app, CommandContext& ctx, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "recompdiag: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (...) {
    return report_error(std::current_exception(), std::cerr);
  }
  return ctx.exit_code;
}

}  // namespace recompdiag::runner::cli
