// `recompdiag train`: one two-phase run, every step written to a run file.

#include <cstdio>
#include <iostream>

#include "cli/metrics_flags.h"
#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/runner/distributed.h"
#include "recompdiag/runner/local_job.h"
#include "recompdiag/runner/rank_processes.h"
#include "recompdiag/trainer/stop_signals.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer::cli {

namespace {

struct TrainCommand {
  TrainFlags flags;
  std::string mode = "recompile";
  std::string out;
  reports::MetricsOptions metrics;
};

}  // namespace

void add_train_command(CLI::App& app, CommandContext& ctx) {
  auto cmd_state = std::make_shared<TrainCommand>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Run the two-phase training (phase 1: loss weights 0.7,0.3, lr 0.01; phase 2: 0.99,0.01, lr "
      "0.001) in one mode and write every step to a run file");
  cmd->add_option("--mode", cmd_state->mode,
                  "recompile: loss weights baked into the compiled step, recompiled at the switch; "
                  "mutable: loss weights and lr held in mutable state, nothing recompiled")
      ->capture_default_str();
  add_train_flags(*cmd, cmd_state->flags);
  cmd->add_option("--out", cmd_state->out, "Run file to write (default: recompdiag-<mode>.jsonl)");
  add_metrics_flags(*cmd, cmd_state->metrics);
  cmd->callback([cmd_state, &ctx] {
    TrainCommand& s = *cmd_state;
    if (wants_fault_list(s.flags)) {
      print_fault_catalogue(std::cout);
      ctx.exit_code = 0;
      return;
    }
    TrainConfig config = to_config(s.flags);
    config.mode = parse_train_mode(s.mode);
    // Everything is validated (and the device resolved) before the run file is created, so bad
    // input leaves no file behind.
    s.metrics.validate();
    const std::string out = s.out.empty() ? std::string("recompdiag-") + s.mode + ".jsonl" : s.out;
    if (launches_local_job(s.flags)) {
      // This process only starts the ranks: each runs this command line again as one rank.
      runner::LocalJobOptions job;
      job.world_size = *s.flags.world_size;
      job.argv = runner::this_command_line();
      ctx.exit_code = runner::run_local_job(job);
      if (ctx.exit_code == 0 && !s.flags.quiet) {
        std::cout << "recompdiag: data-parallel " << s.mode << " job of " << job.world_size
                  << " rank(s) finished; wrote " << rank_file_path(out, 0)
                  << (job.world_size > 1 ? " ... " + rank_file_path(out, job.world_size - 1)
                                         : std::string())
                  << "\n";
      }
      return;
    }
    const std::optional<runner::DistributedOptions>& rank = config.distributed;
    // Joins the job (when this process is a rank) before the run file exists.
    TwoPhaseTrainer trainer(config);
    // Binds the metrics port (a port in use is bad input) before the run file exists.
    reports::MetricsOptions metrics_options = s.metrics;
    // One endpoint per rank of a local job: rank r serves on PORT + r.
    if (rank)
      metrics_options.listen_addr = runner::rank_listen_addr(s.metrics.listen_addr, rank->rank);
    std::unique_ptr<RecordSink> metrics = reports::make_metrics_sink(metrics_options);
    const std::string path = rank ? rank_file_path(out, rank->rank) : out;
    RunFileSink file(path);
    trainer.add_sink(file);
    if (metrics) trainer.add_sink(*metrics);
    trainer::TerminalProgress progress(stdout);
    // One progress stream per job: rank 0's.
    if (!s.flags.quiet && (!rank || rank->rank == 0)) trainer.set_progress(&progress);
    StopOnSignals stop(trainer);
    TrainResult result = trainer.run();
    if (stop.signal() != 0) throw runner::Interrupted(stop.signal(), "train (" + path + ")");
    if (!s.flags.quiet) {
      std::cout << "recompdiag: " << s.mode << " run";
      if (rank) std::cout << ", rank " << rank->rank << " of " << rank->world_size << ",";
      std::cout << " on " << trainer.header().device_used << ": " << result.summary.steps
                << " steps in " << result.summary.elapsed_s << " s, " << result.compiles
                << " compile(s), final loss " << result.summary.final_loss << "; wrote " << path
                << "\n";
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
