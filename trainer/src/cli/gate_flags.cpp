// The gate's flags and the exit code a verdict gives, for `compare` and `ab`.

#include "cli/gate_flags.h"

#include "recompdiag/reports/words.h"

namespace recompdiag::trainer::cli {

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

void apply_gate_flags(const GateFlags& flags, CompareOptions& options) {
  options.threshold = flags.threshold_pct / 100.0;
  options.alpha = flags.alpha;
  options.fail_on = parse_fail_on(flags.fail_on);
}

int gate_exit_code(const Comparison& c, const GateFlags& flags, std::ostream& err) {
  if (c.verdict == Verdict::kInconclusive) {
    err << "recompdiag: warning: " << reports::summary(c)
        << (flags.strict_inconclusive ? " (exit 1: --strict-inconclusive)"
                                      : " (exit 0; --strict-inconclusive makes it 1)")
        << "\n";
  }
  return exit_code_for(c, flags.strict_inconclusive);
}

}  // namespace recompdiag::trainer::cli
