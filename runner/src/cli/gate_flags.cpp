// The gate's flags, for `compare` and `ab`.

#include "cli/gate_flags.h"

namespace recompdiag::runner::cli {

namespace {

// --fail-on's help: every gate count with its line, from the one list (gate_counts()).
std::string fail_on_help() {
  std::string help =
      "Counts that fail the gate (exit 1) when B has more in any phase, whatever the timing; "
      "comma-separated:";
  for (const GateCount& c : gate_counts()) help += "\n  " + c.name + ": " + c.help;
  return help;
}

}  // namespace

void add_gate_flags(CLI::App& cmd, GateFlags& flags) {
  cmd.add_option("--threshold", flags.threshold_pct,
                 "Noise threshold in percent: smaller changes never count as a regression")
      ->capture_default_str()
      ->group("Gate");
  cmd.add_option("--alpha", flags.alpha,
                 "Family-wise significance level of the phase tests (Holm over the phases)")
      ->capture_default_str()
      ->group("Gate");
  cmd.add_option("--fail-on", flags.fail_on, fail_on_help())->group("Gate");
  cmd.add_flag("--strict-inconclusive", flags.strict_inconclusive,
               "Exit 1 when the verdict is inconclusive (default: exit 0 with a warning)")
      ->group("Gate");
}

Gate to_gate(const GateFlags& flags) {
  Gate gate;
  gate.compare.threshold = flags.threshold_pct / 100.0;
  gate.compare.alpha = flags.alpha;
  gate.compare.fail_on = parse_fail_on(flags.fail_on);
  gate.strict_inconclusive = flags.strict_inconclusive;
  return gate;
}

}  // namespace recompdiag::runner::cli
