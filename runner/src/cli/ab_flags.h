#pragma once
// What `ab` has in both its forms (the built-in modes in recompdiag-trainer, two commands in the
// torch-free front end): the flags, and what they say of the run (ab_run.h runs it).

#include <CLI/CLI.hpp>
#include <string>

#include "cli/gate_flags.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/runner/ab_run.h"

namespace recompdiag::runner::cli {

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
  double start_wait_s = 60.0;
  bool until_decided = false;
  int max_pairs = 5;
  std::string calibration;
};

/// Adds ab's shared flags to `cmd`, bound to `flags` (which must outlive parsing): --out-dir, the
/// gate's, --noise-profile, --repeats, --turn-every, --cpus, --a-cmd, --b-cmd, --a-name,
/// --b-name, --turn-timeout; and --quiet when `with_quiet` (the trainer's train flags have it).
void add_ab_flags(CLI::App& cmd, AbFlags& flags, bool with_quiet);

/// Whether `flag` is one a two-command `ab` reads.
bool applies_to_commands(const std::string& flag);

/// The gate from the flags (the gate's, the noise profile), before an experiment fits its
/// comparison to its runs. Throws InputError for an unknown --fail-on name or a bad profile.
Gate ab_gate(const AbFlags& flags);

/// `ab --a-cmd ... --b-cmd ...` from its flags: refuses a flag of `cmd` that a two-command ab does
/// not read (one line), and both commands must be given. The values are checked by
/// AbRunOptions::validate() (run_ab()).
AbRunOptions ab_run_options(const AbFlags& flags, const CLI::App& cmd);

}  // namespace recompdiag::runner::cli
