// `recompdiag ab`: both modes with the same seed and config, then the A/B report.

#include <iostream>

#include "cli/ab_flags.h"
#include "cli/metrics_flags.h"
#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/trainer/ab_experiment.h"

namespace recompdiag::trainer::cli {

namespace {

using runner::cli::AbFlags;

struct AbCommand {
  TrainFlags flags;
  AbFlags ab;  // what the two-command form shares
  bool sequential = false;
  reports::MetricsOptions metrics;
};

/// `ab`: the commands' pair, or the built-in modes (a fault against its healthy twin); returns
/// the exit code.
int run_ab(AbCommand& s, CLI::App& cmd) {
  s.ab.quiet = s.flags.quiet;
  if (cmd.count("--a-cmd") > 0 || cmd.count("--b-cmd") > 0) {
    return runner::run_ab(runner::cli::ab_run_options(s.ab, cmd), std::cout, std::cerr);
  }
  for (const char* flag : {"--a-name", "--b-name", "--turn-timeout", "--first-turn", "--start-wait",
                           "--until-decided", "--max-pairs", "--calibration"}) {
    if (cmd.count(flag) > 0) {
      throw InputError(std::string("ab ") + flag + " applies to --a-cmd/--b-cmd runs");
    }
  }
  if (wants_fault_list(s.flags)) {
    print_fault_catalogue(std::cout);
    return 0;
  }
  AbExperimentOptions experiment;
  experiment.a.config = to_config(s.flags);
  if (experiment.a.config.distributed) {
    throw InputError(
        "ab starts its jobs' ranks itself (--world-size N): run it without a launcher's RANK "
        "and WORLD_SIZE");
  }
  // With --world-size each run of each pair is a local job of N ranks; the report compares jobs.
  experiment.job = job_of_world_size(s.flags);
  experiment.a.config.mode = TrainMode::kRecompile;
  experiment.b.config = experiment.a.config;
  experiment.b.config.mode = TrainMode::kMutable;
  if (!experiment.a.config.faults.empty()) {
    // ab --fault: A is the healthy run, B the same seed and config with the fault. Both
    // recompile; the healthy one migrates Adam's state (the remedy) unless told otherwise.
    experiment.b.config = experiment.a.config;
    experiment.a.config.faults = {};
    if (experiment.b.config.faults.has(FaultKind::kRecompileOneRank)) {
      // A job whose ranks all recompile at the switch hides one rank's extra compile: the
      // healthy twin of a rank-dependent recompile compiles nothing there (mutable mode).
      experiment.a.config.mode = TrainMode::kMutable;
      experiment.b.config.mode = TrainMode::kMutable;
    }
    if (cmd.count("--optimizer-handoff") == 0) {
      experiment.a.config.handoff = OptimizerHandoff::kMigrate;
      experiment.b.config.handoff = OptimizerHandoff::kMigrate;
    }
    experiment.a.name = "healthy";
    experiment.b.name = experiment.b.config.faults.to_string();
    for (char& c : experiment.b.name) {
      if (c == ',') c = '_';
      if (c == '=') c = '-';
    }
  }
  experiment.out_dir = s.ab.out_dir;
  experiment.schedule = s.sequential ? AbSchedule::kSequential : AbSchedule::kInterleaved;
  experiment.turn_every_steps = s.ab.turn_every_steps;
  experiment.cpus = s.ab.cpus;
  experiment.quiet = s.flags.quiet;
  experiment.repeats = s.ab.repeats;
  experiment.metrics = s.metrics;
  // What the sides differ in by design is listed, not warned about; turns pair the epochs.
  runner::Gate gate = runner::cli::ab_gate(s.ab);
  gate.compare = experiment.compare_options(gate.compare);
  gate.compare.validate();  // before anything trains
  return runner::report_ab(run_ab_experiment(experiment), gate, s.ab.out_dir, s.ab.quiet, std::cout,
                           std::cerr);
}

}  // namespace

void add_ab_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<AbCommand>();
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "Train both modes (recompile, then mutable) with the same seed and config, compare them and "
      "write DIR/recompile.jsonl, DIR/mutable.jsonl, DIR/report.{md,html,json}. With --fault: "
      "A is the healthy run, B the same seed and config with the fault (DIR/healthy.jsonl, "
      "DIR/<fault>.jsonl). With --world-size N each run is a data-parallel job of N local ranks "
      "(DIR/NAME.rank0.jsonl, ...) and a pair's two jobs take turns as wholes. The gate, as "
      "compare's: exit 0 no regression (inconclusive warns); 1 B regresses beyond the threshold "
      "with significance, or a --fail-on count grew; 2 bad input; 4 a side's run failed (no "
      "verdict)");
  add_train_flags(*cmd, state->flags);
  runner::cli::add_ab_flags(*cmd, state->ab, /*with_quiet=*/false);  // --quiet is a train flag
  cmd->add_flag("--sequential", state->sequential,
                "Train the modes one after the other instead of taking turns (turns make a "
                "machine that speeds up or slows down affect both runs alike)");
  add_metrics_flags(*cmd, state->metrics);
  cmd->callback([state, cmd, &ctx] {
    ctx.exit_code = runner::guarded_ab([&] { return run_ab(*state, *cmd); }, std::cerr);
  });
}

}  // namespace recompdiag::trainer::cli
