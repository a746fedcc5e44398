#pragma once
// What `ab` has in both its forms (the built-in modes in recompdiag-trainer, two commands in the
// torch-free front end): the flags, the comparison's settings, the reports and the exit code;
// and the two-command form's run.

#include <CLI/CLI.hpp>
#include <string>

#include "cli/gate_flags.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/trainer/ab_commands.h"

namespace recompdiag::trainer::cli {

struct AbFlags {
  std::string out_dir = "recompdiag-ab";
  GateFlags gate;
  std::string noise_profile;
  int repeats = 1;
  int64_t turn_every_steps = 1;
  std::string cpus = "auto";
  bool quiet = false;
  // Two commands (two builds) instead of the built-in modes.
  AbCommandsOptions commands;
  double turn_timeout_s = static_cast<double>(kDefaultTurnTimeoutMs) / 1000.0;
};

/// Adds ab's shared flags to `cmd`, bound to `flags` (which must outlive parsing): --out-dir, the
/// gate's, --noise-profile, --repeats, --turn-every, --cpus, --a-cmd, --b-cmd, --a-name,
/// --b-name, --turn-timeout; and --quiet when `with_quiet` (the trainer's train flags have it).
void add_ab_flags(CLI::App& cmd, AbFlags& flags, bool with_quiet);

/// Whether `flag` is one a two-command `ab` reads.
bool applies_to_commands(const std::string& flag);

/// The comparison's settings from the flags (the gate's, the noise profile), before the
/// experiment fits them to its runs.
CompareOptions ab_base_options(const AbFlags& flags);

/// Compares an experiment's runs and writes the reports, printing the summary; returns the gate's
/// exit code, or side_failed_exit_code's when a run failed (no verdict on failed runs).
int report_ab_runs(const AbExperimentResult& runs, const CompareOptions& options,
                   const AbFlags& flags);

/// `ab --a-cmd ... --b-cmd ...`: refuses a flag of `cmd` that a two-command ab does not read,
/// runs the pair(s), reports; returns the exit code.
int run_ab_commands_form(const AbFlags& flags, CLI::App& cmd);

/// Runs `ab` (`run`, returning its exit code) so that a pair that could not run or be recorded
/// (IoError, JobError) exits kExitSideFailed after its one line, never as a verdict.
int run_ab_guarded(const std::function<int()>& run);

}  // namespace recompdiag::trainer::cli
