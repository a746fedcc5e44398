// The flags `ab` has in both its forms, and what they say of a two-command `ab` (AbRunOptions).

#include "cli/ab_flags.h"

#include <set>

#include "cli/command_line.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/noise_profile.h"

namespace recompdiag::runner::cli {

void add_ab_flags(CLI::App& cmd, AbFlags& f, bool with_quiet) {
  cmd.add_option("--out-dir", f.out_dir, "Directory for run files and reports")
      ->capture_default_str();
  add_gate_flags(cmd, f.gate);
  cmd.add_option("--noise-profile", f.noise_profile,
                 "This machine's run-to-run spread (`recompdiag bench noise`): what one pair "
                 "that does not take turns (--sequential) needs for a time verdict");
  cmd.add_option("--repeats", f.repeats,
                 "Pairs of runs; with 2 or more the comparison takes the run as the unit "
                 "(files DIR/NAME-1.jsonl, ...)")
      ->capture_default_str();
  if (with_quiet) {
    cmd.add_flag("--quiet", f.quiet,
                 "Print the report only: with --a-cmd/--b-cmd the sides' Monitors write no alert "
                 "lines either (their run files keep them)");
  }
  cmd.add_option("--a-cmd", f.commands.a.command,
                 "Side A (the baseline) as a shell command that trains once and writes its run "
                 "file to {out}, e.g. 'build-base/my_trainer {out}'; with --b-cmd the two "
                 "commands take turns (RECOMPDIAG_TURNS, see --turn-every) instead of the "
                 "built-in modes, and the train flags do not apply");
  cmd.add_option("--b-cmd", f.commands.b.command, "Side B as a shell command (see --a-cmd)");
  cmd.add_option("--a-name", f.commands.a.name,
                 "Side A's name with --a-cmd: its run files are DIR/NAME.jsonl")
      ->capture_default_str();
  cmd.add_option("--b-name", f.commands.b.name, "Side B's name with --b-cmd")
      ->capture_default_str();
  cmd.add_option("--turn-timeout", f.turn_timeout_s,
                 "With --a-cmd/--b-cmd: seconds a side waits for its turn before it trains on "
                 "without turns, and a side may leave its turn unread after the other ended "
                 "before it is stopped")
      ->capture_default_str();
  cmd.add_option("--first-turn", f.commands.first,
                 "With --a-cmd/--b-cmd: which side takes each pair's first turn: random (drawn per "
                 "pair, recorded in DIR/pairs.json), a, b or alternate")
      ->capture_default_str();
  cmd.add_option("--start-wait", f.start_wait_s,
                 "With --a-cmd/--b-cmd: seconds each pair's first turn waits for both commands to "
                 "have started (each waiting for its first turn), so that neither side's first "
                 "steps run beside the other's start-up; 0: at once")
      ->capture_default_str();
  cmd.add_flag("--until-decided", f.until_decided,
               "With --a-cmd/--b-cmd: repeat pairs while the verdict is not settled, at most "
               "--max-pairs; each look's level is spent from --alpha (Lan-DeMets, "
               "O'Brien-Fleming-like), so that looking again keeps the gate's error at alpha");
  cmd.add_option("--max-pairs", f.max_pairs, "With --until-decided: the most pairs it runs")
      ->capture_default_str();
  cmd.add_option("--calibration", f.calibration,
                 "With --a-cmd/--b-cmd: the file `recompdiag calibrate` wrote for this job on this "
                 "runner: its false-verdict and detection rates are printed beside the verdict, "
                 "and matched compiles are judged against its compile spread");
  cmd.add_option("--turn-every", f.turn_every_steps,
                 "Steps per turn: the two runs of a pair alternate every N steps, so that a level "
                 "the machine holds for a second or more falls on both (0: at epoch boundaries; "
                 "a data-parallel job takes its turns at epoch boundaries)")
      ->capture_default_str();
  cmd.add_option("--cpus", f.cpus,
                 "CPUs both runs of a pair are pinned to: auto (one CPU, the last this process "
                 "may use: the two halves of a pair share it, so a vCPU the host slows down slows "
                 "both), all (no pinning), or a list such as 0-3 (a data-parallel job's ranks are "
                 "not pinned)")
      ->capture_default_str();
}

bool applies_to_commands(const std::string& flag) {
  // The flags add_ab_flags() defines (and --help), read off an app it filled: one list.
  static const std::set<std::string> names = [] {
    CLI::App app;
    AbFlags flags;
    add_ab_flags(app, flags, /*with_quiet=*/true);
    std::set<std::string> out;
    for (const CLI::Option* option : app.get_options()) out.insert(option->get_name());
    return out;
  }();
  return names.count(flag) > 0;
}

Gate ab_gate(const AbFlags& f) {
  Gate gate = to_gate(f.gate);
  if (!f.noise_profile.empty()) {
    apply_noise_profile(read_noise_profile(f.noise_profile), f.noise_profile, gate.compare);
  }
  return gate;
}

AbRunOptions ab_run_options(const AbFlags& f, const CLI::App& cmd) {
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() > 0 && !applies_to_commands(option->get_name())) {
      throw InputError("ab --a-cmd/--b-cmd: " + option->get_name() +
                       " is not a flag of ab with two commands (a built-in run's flag configures "
                       "the built-in runs; pass it in the commands instead)");
    }
  }
  if (cmd.count("--a-cmd") == 0 || cmd.count("--b-cmd") == 0) {
    throw InputError("ab needs both --a-cmd and --b-cmd, or neither");
  }
  AbRunOptions ab;
  ab.pair = f.commands;
  ab.pair.out_dir = f.out_dir;
  ab.pair.repeats = f.repeats;
  ab.pair.turn_every_steps = f.turn_every_steps;
  ab.pair.cpus = f.cpus;
  ab.pair.quiet = f.quiet;
  ab.pair.turn_timeout_ms = milliseconds_of_flag("--turn-timeout", f.turn_timeout_s);
  ab.pair.start_wait_ms = milliseconds_of_flag("--start-wait", f.start_wait_s);
  ab.gate = ab_gate(f);
  ab.quiet = f.quiet;
  if (f.until_decided && cmd.count("--repeats") > 0) {
    throw InputError("give --repeats or --until-decided, not both");
  }
  if (!f.until_decided && cmd.count("--max-pairs") > 0) {
    throw InputError("--max-pairs applies to --until-decided");
  }
  ab.until_decided = f.until_decided;
  ab.max_pairs = f.max_pairs;
  ab.calibration = f.calibration;
  return ab;
}

}  // namespace recompdiag::runner::cli
