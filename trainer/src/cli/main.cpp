// recompdiag: the command-line tool.

#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "recompdiag/core/version.h"
#include "recompdiag/trainer/exit_codes.h"

int main(int argc, char** argv) {
  using recompdiag::trainer::cli::CommandContext;
  // Past a file-size limit, write() then fails with EFBIG and the run stops with one clear line,
  // instead of the process dying of SIGXFSZ without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "recompdiag: diagnose why training slows down after its step is recompiled, and prove the "
      "fix"};
  app.set_version_flag("--version", std::string("recompdiag ") + recompdiag::kToolVersion);
  app.require_subcommand(1);
  CommandContext ctx;
  recompdiag::trainer::cli::add_train_command(app, ctx);
  recompdiag::trainer::cli::add_compare_command(app, ctx);
  recompdiag::trainer::cli::add_ab_command(app, ctx);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print figures");
  bench->require_subcommand(1);
  recompdiag::trainer::cli::add_bench_compare_command(*bench, ctx);
  recompdiag::trainer::cli::add_bench_overhead_command(*bench, ctx);
  recompdiag::trainer::cli::add_bench_gate_command(*bench, ctx);
  recompdiag::trainer::cli::add_bench_noise_command(*bench, ctx);
  recompdiag::trainer::cli::add_bench_diagnose_command(*bench, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "recompdiag: error: " << e.what() << "\n";
    return 2;
  } catch (...) {
    return recompdiag::trainer::report_error(std::current_exception(), std::cerr);
  }
  return ctx.exit_code;
}
