// recompdiag: the command-line tool.

#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/version.h"
#include "recompdiag/trainer/stop_signals.h"

int main(int argc, char** argv) {
  using recompdiag::cli::CommandContext;
  // Past a file-size limit, write() then fails with EFBIG and the run stops with one clear line,
  // instead of the process dying of SIGXFSZ without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "recompdiag: diagnose why training slows down after its step is recompiled, and prove the "
      "fix"};
  app.set_version_flag("--version", std::string("recompdiag ") + recompdiag::kToolVersion);
  app.require_subcommand(1);
  CommandContext ctx;
  recompdiag::cli::add_train_command(app, ctx);
  recompdiag::cli::add_compare_command(app, ctx);
  recompdiag::cli::add_ab_command(app, ctx);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print figures");
  bench->require_subcommand(1);
  recompdiag::cli::add_bench_compare_command(*bench, ctx);
  recompdiag::cli::add_bench_overhead_command(*bench, ctx);
  recompdiag::cli::add_bench_gate_command(*bench, ctx);
  recompdiag::cli::add_bench_diagnose_command(*bench, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "recompdiag: error: " << e.what() << "\n";
    return 2;
  } catch (const recompdiag::InputError& e) {
    std::cerr << "recompdiag: error: " << e.what() << "\n";
    return 2;
  } catch (const recompdiag::IoError& e) {
    std::cerr << "recompdiag: error: " << e.what() << "\n";
    return 1;
  } catch (const recompdiag::Interrupted& e) {
    std::cerr << "recompdiag: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    // Anything else is our fault, not the input's: one line (LibTorch appends a backtrace to
    // its messages), and an exit code apart from bad input. Run files are flushed line by line,
    // so every completed step is already on disk.
    const std::string what = e.what();
    std::cerr << "recompdiag: internal error: " << what.substr(0, what.find('\n')) << "\n";
    return 3;
  } catch (...) {
    std::cerr << "recompdiag: internal error: unknown exception\n";
    return 3;
  }
  return ctx.exit_code;
}
