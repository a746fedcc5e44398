// `recompdiag train`: one two-phase run, every step written to a run file.

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/metrics_flags.h"
#include "cli/train_flags.h"
#include "recompdiag/core/run_io.h"
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
    validate(s.metrics);
    TwoPhaseTrainer trainer(config);
    // Binds the metrics port (a port in use is bad input) before the run file exists.
    std::unique_ptr<RecordSink> metrics = reports::make_metrics_sink(s.metrics);
    const std::string out = s.out.empty() ? std::string("recompdiag-") + s.mode + ".jsonl" : s.out;
    RunFileSink file(out);
    trainer.add_sink(file);
    if (metrics) trainer.add_sink(*metrics);
    trainer::TerminalProgress progress(stdout);
    if (!s.flags.quiet) trainer.set_progress(&progress);
    StopOnSignals stop(trainer);
    TrainResult result = trainer.run();
    if (stop.signal() != 0) throw Interrupted(stop.signal(), "train (" + out + ")");
    if (!s.flags.quiet) {
      std::cout << "recompdiag: " << s.mode << " run on " << trainer.header().device_used << ": "
                << result.summary.steps << " steps in " << result.summary.elapsed_s << " s, "
                << result.compiles << " compile(s), final loss " << result.summary.final_loss
                << "; wrote " << out << "\n";
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
