// `recompdiag ab`: both modes with the same seed and config, then the A/B report.

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/metrics_flags.h"
#include "cli/run_set.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/trainer/ab_experiment.h"

namespace recompdiag::trainer::cli {

namespace {

struct AbCommand {
  TrainFlags flags;
  std::string out_dir = "recompdiag-ab";
  double threshold_pct = 5.0;
  double alpha = 0.05;
  bool sequential = false;
  int repeats = 1;
  reports::MetricsOptions metrics;
};

}  // namespace

void add_ab_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<AbCommand>();
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "Train both modes (recompile, then mutable) with the same seed and config, compare them and "
      "write DIR/recompile.jsonl, DIR/mutable.jsonl, DIR/report.{md,html,json}. With --fault: "
      "A is the healthy run, B the same seed and config with the fault (DIR/healthy.jsonl, "
      "DIR/<fault>.jsonl). With --world-size N each run is a data-parallel job of N local ranks "
      "(DIR/NAME.rank0.jsonl, ...) and a pair's two jobs take turns as wholes");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--out-dir", state->out_dir, "Directory for run files and reports")
      ->capture_default_str();
  cmd->add_option("--threshold", state->threshold_pct, "Noise threshold in percent for the verdict")
      ->capture_default_str();
  cmd->add_option("--alpha", state->alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str();
  cmd->add_flag("--sequential", state->sequential,
                "Train the modes one after the other instead of taking turns epoch by epoch (turns "
                "make a machine that speeds up or slows down affect both runs alike)");
  cmd->add_option("--repeats", state->repeats,
                  "Pairs of runs; with 2 or more the comparison takes the run as the unit "
                  "(files DIR/recompile-1.jsonl, ...)")
      ->capture_default_str();
  add_metrics_flags(*cmd, state->metrics);
  cmd->callback([state, cmd, &ctx] {
    AbCommand& s = *state;
    if (wants_fault_list(s.flags)) {
      print_fault_catalogue(std::cout);
      ctx.exit_code = 0;
      return;
    }
    AbExperimentOptions experiment;
    experiment.a.config = to_config(s.flags);
    if (experiment.a.config.distributed) {
      throw InputError(
          "ab starts its jobs' ranks itself (--world-size N): run it without a launcher's RANK "
          "and WORLD_SIZE");
    }
    if (s.flags.world_size) {
      // Each run of each pair is a local job of N ranks; the report compares the jobs.
      DistributedOptions job;
      job.world_size = *s.flags.world_size;
      job.rendezvous_timeout_s = s.flags.rendezvous_timeout_s;
      job.collective_timeout_s = s.flags.collective_timeout_s;
      experiment.job = job;
    }
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
      if (cmd->count("--optimizer-handoff") == 0) {
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
    experiment.out_dir = s.out_dir;
    experiment.schedule = s.sequential ? AbSchedule::kSequential : AbSchedule::kInterleaved;
    experiment.quiet = s.flags.quiet;
    experiment.repeats = s.repeats;
    experiment.metrics = s.metrics;
    CompareOptions options;
    options.threshold = s.threshold_pct / 100.0;
    options.alpha = s.alpha;
    // What the sides differ in by design is listed, not warned about; turns assume no spread.
    options = experiment.compare_options(options);
    options.validate();  // before anything trains
    const AbExperimentResult runs = run_ab_experiment(experiment);
    if (runs.exit_code != 0) {
      ctx.exit_code = runs.exit_code;
      return;
    }
    // A job's rank files are one run (the slowest rank per step), with its rank table and
    // stragglers; single runs stay as they are.
    const std::vector<RunSet> a = group_rank_files(read_run_set(runs.a_paths));
    const std::vector<RunSet> b = group_rank_files(read_run_set(runs.b_paths));
    std::cout << reports::write_reports(compare_jobs(a, b, options), s.out_dir);
    if (!s.flags.quiet) std::cout << "\nreports: " << s.out_dir << "/report.{md,html,json}\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
