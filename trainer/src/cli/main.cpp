// recompdiag-trainer: every recompdiag command, LibTorch loaded. The `recompdiag` front end
// (runner/src/cli/front_end.cpp) runs the runner's commands itself and execs this for the rest.

#include <csignal>

#include "cli/command_line.h"
#include "cli/trainer_commands.h"

int main(int argc, char** argv) {
  namespace runner_cli = recompdiag::runner::cli;
  using namespace recompdiag::trainer::cli;
  // Past a file-size limit, write() then fails with EFBIG and the run stops with one clear line,
  // instead of the process dying of SIGXFSZ without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app;
  runner_cli::describe_app(app);
  CommandContext ctx;
  // The runner's commands but its `ab` (the built-in one below takes --a-cmd/--b-cmd too).
  runner_cli::add_runner_commands(app, ctx, /*with_commands=*/false);
  add_train_command(app, ctx);
  add_ab_command(app, ctx);
  CLI::App* bench = runner_cli::add_group(app, "bench");
  add_bench_overhead_command(*bench, ctx);
  add_bench_gate_command(*bench, ctx);
  add_bench_noise_command(*bench, ctx);
  add_bench_diagnose_command(*bench, ctx);
  return runner_cli::run_command_line(app, ctx, argc, argv);
}
