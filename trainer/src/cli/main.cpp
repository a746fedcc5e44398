// recompdiag-trainer: every recompdiag command, LibTorch loaded. The `recompdiag` front end
// (front_end.cpp) runs the commands that only read run files itself and execs this for the rest.

#include <csignal>

#include "cli/command_line.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace recompdiag::trainer::cli;
  // Past a file-size limit, write() then fails with EFBIG and the run stops with one clear line,
  // instead of the process dying of SIGXFSZ without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app;
  describe_app(app);
  CommandContext ctx;
  add_train_command(app, ctx);
  add_compare_command(app, ctx);
  add_ab_command(app, ctx);
  CLI::App* bench = add_bench_group(app);
  add_bench_compare_command(*bench, ctx);
  add_bench_overhead_command(*bench, ctx);
  add_bench_gate_command(*bench, ctx);
  add_bench_noise_command(*bench, ctx);
  add_bench_diagnose_command(*bench, ctx);
  return run_command_line(app, ctx, argc, argv);
}
