// `recompdiag ab`: both modes with the same seed and config, then the A/B report.

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "cli/metrics_flags.h"
#include "cli/run_set.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/noise_profile.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/trainer/ab_commands.h"
#include "recompdiag/trainer/ab_experiment.h"
#include "recompdiag/trainer/exit_codes.h"

namespace recompdiag::trainer::cli {

namespace {

struct AbCommand {
  TrainFlags flags;
  std::string out_dir = "recompdiag-ab";
  GateFlags gate;
  std::string noise_profile;
  bool sequential = false;
  int repeats = 1;
  reports::MetricsOptions metrics;
  // Two commands (two builds) instead of the built-in modes.
  AbCommandsOptions commands;
  double turn_timeout_s = static_cast<double>(kDefaultTurnTimeoutMs) / 1000.0;
  int64_t turn_every_steps = 1;
  std::string cpus = "auto";
};

/// Compares an experiment's runs and writes the reports, printing the summary; returns the gate's
/// exit code, or side_failed_exit_code's when a run failed (no verdict on failed runs).
int report_runs(const AbExperimentResult& runs, const CompareOptions& options, const AbCommand& s) {
  if (runs.exit_code != 0) return side_failed_exit_code(runs.exit_code);
  // A job's rank files are one run (the slowest rank per step), with its rank table and
  // stragglers; single runs stay as they are.
  const std::vector<RunSet> a = group_rank_files(read_run_set(runs.a_paths));
  const std::vector<RunSet> b = group_rank_files(read_run_set(runs.b_paths));
  const Comparison c = compare_jobs(a, b, options);
  std::cout << reports::write_reports(c, s.out_dir);
  if (!s.flags.quiet) std::cout << "\nreports: " << s.out_dir << "/report.{md,html,json}\n";
  std::cout.flush();
  return gate_exit_code(c, s.gate, std::cerr);
}

/// The flags that a two-command `ab` reads; the others configure the built-in runs.
bool applies_to_commands(const std::string& flag) {
  for (const char* name :
       {"--a-cmd", "--b-cmd", "--a-name", "--b-name", "--turn-timeout", "--turn-every", "--cpus",
        "--out-dir", "--noise-profile", "--repeats", "--quiet", "--help"}) {
    if (flag == name) return true;
  }
  return is_gate_flag(flag);
}

/// The comparison's settings from the flags, before the experiment fits them to its runs.
CompareOptions base_options(const AbCommand& s) {
  CompareOptions options;
  apply_gate_flags(s.gate, options);
  if (!s.noise_profile.empty()) {
    apply_noise_profile(read_noise_profile(s.noise_profile), s.noise_profile, options);
  }
  return options;
}

/// `ab --a-cmd ... --b-cmd ...`: the commands' runs, then the same report as the built-in runs'.
int run_commands(const AbCommand& s, CLI::App& cmd) {
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() > 0 && !applies_to_commands(option->get_name())) {
      throw InputError("ab --a-cmd/--b-cmd: " + option->get_name() +
                       " configures the built-in runs; pass it in the commands instead");
    }
  }
  if (cmd.count("--a-cmd") == 0 || cmd.count("--b-cmd") == 0) {
    throw InputError("ab needs both --a-cmd and --b-cmd, or neither");
  }
  AbCommandsOptions experiment = s.commands;
  experiment.out_dir = s.out_dir;
  experiment.repeats = s.repeats;
  experiment.turn_every_steps = s.turn_every_steps;
  experiment.cpus = s.cpus;
  if (!(s.turn_timeout_s > 0.0 && s.turn_timeout_s < 1e9)) {
    throw InputError("--turn-timeout must be > 0 s, got " + std::to_string(s.turn_timeout_s));
  }
  experiment.turn_timeout_ms = static_cast<int64_t>(s.turn_timeout_s * 1000.0 + 0.5);
  CompareOptions options = experiment.compare_options(base_options(s));
  options.validate();  // before anything trains
  return report_runs(run_ab_commands(experiment), options, s);
}

/// `ab`: the commands' pair, or the built-in modes (a fault against its healthy twin); returns
/// the exit code.
int run_ab(const AbCommand& s, CLI::App& cmd) {
  if (cmd.count("--a-cmd") > 0 || cmd.count("--b-cmd") > 0) return run_commands(s, cmd);
  for (const char* flag : {"--a-name", "--b-name", "--turn-timeout"}) {
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
  experiment.out_dir = s.out_dir;
  experiment.schedule = s.sequential ? AbSchedule::kSequential : AbSchedule::kInterleaved;
  experiment.turn_every_steps = s.turn_every_steps;
  experiment.cpus = s.cpus;
  experiment.quiet = s.flags.quiet;
  experiment.repeats = s.repeats;
  experiment.metrics = s.metrics;
  // What the sides differ in by design is listed, not warned about; turns pair the epochs.
  CompareOptions options = experiment.compare_options(base_options(s));
  options.validate();  // before anything trains
  return report_runs(run_ab_experiment(experiment), options, s);
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
  cmd->add_option("--out-dir", state->out_dir, "Directory for run files and reports")
      ->capture_default_str();
  add_gate_flags(*cmd, state->gate);
  cmd->add_option("--noise-profile", state->noise_profile,
                  "This machine's run-to-run spread (`recompdiag bench noise`): what one pair "
                  "that does not take turns (--sequential) needs for a time verdict");
  cmd->add_flag("--sequential", state->sequential,
                "Train the modes one after the other instead of taking turns (turns make a "
                "machine that speeds up or slows down affect both runs alike)");
  cmd->add_option("--repeats", state->repeats,
                  "Pairs of runs; with 2 or more the comparison takes the run as the unit "
                  "(files DIR/recompile-1.jsonl, ...)")
      ->capture_default_str();
  add_metrics_flags(*cmd, state->metrics);
  cmd->add_option(
      "--a-cmd", state->commands.a.command,
      "Side A (the baseline) as a shell command that trains once and writes its run "
      "file to {out}, e.g. 'build-base/recompdiag train --quiet --out {out}'; with "
      "--b-cmd the two commands take turns (RECOMPDIAG_TURNS, see --turn-every) instead of "
      "the built-in modes, and the train flags do not apply");
  cmd->add_option("--b-cmd", state->commands.b.command, "Side B as a shell command (see --a-cmd)");
  cmd->add_option("--a-name", state->commands.a.name,
                  "Side A's name with --a-cmd: its run files are DIR/NAME.jsonl")
      ->capture_default_str();
  cmd->add_option("--b-name", state->commands.b.name, "Side B's name with --b-cmd")
      ->capture_default_str();
  cmd->add_option("--turn-timeout", state->turn_timeout_s,
                  "With --a-cmd/--b-cmd: seconds a side waits for its turn before it trains on "
                  "without turns, and a side may leave its turn unread after the other ended "
                  "before it is stopped")
      ->capture_default_str();
  cmd->add_option("--turn-every", state->turn_every_steps,
                  "Steps per turn: the two runs of a pair alternate every N steps, so that a level "
                  "the machine holds for a second or more falls on both (0: at epoch boundaries; "
                  "a data-parallel job takes its turns at epoch boundaries)")
      ->capture_default_str();
  cmd->add_option("--cpus", state->cpus,
                  "CPUs both runs of a pair are pinned to: auto (one CPU, the last this process "
                  "may use: the two halves of a pair share it, so a vCPU the host slows down slows "
                  "both), all (no pinning), or a list such as 0-3 (a data-parallel job's ranks are "
                  "not pinned)")
      ->capture_default_str();
  cmd->callback([state, cmd, &ctx] {
    try {
      ctx.exit_code = run_ab(*state, *cmd);
    } catch (const IoError&) {
      // ab could not run or record its pair: no verdict, and not one to read as a regression.
      ctx.exit_code = side_failed_exit_code(report_error(std::current_exception(), std::cerr));
    } catch (const JobError&) {
      ctx.exit_code = side_failed_exit_code(report_error(std::current_exception(), std::cerr));
    }
  });
}

}  // namespace recompdiag::trainer::cli
