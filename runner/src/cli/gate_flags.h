#pragma once
// The gate's flags, shared by `compare` and `ab`: what counts as a regression (--threshold,
// --alpha, --fail-on, --strict-inconclusive), as a Gate (recompdiag/runner/gate.h).

#include <CLI/CLI.hpp>
#include <string>

#include "recompdiag/runner/gate.h"

namespace recompdiag::runner::cli {

struct GateFlags {
  double threshold_pct = 5.0;
  double alpha = 0.05;
  std::string fail_on;
  bool strict_inconclusive = false;
};

/// Adds --threshold, --alpha, --fail-on (its help lists gate_counts(), one line each) and
/// --strict-inconclusive to `cmd`, bound to `flags` (which must outlive parsing).
void add_gate_flags(CLI::App& cmd, GateFlags& flags);

/// The gate the flags ask for: threshold, alpha, fail_on and strict_inconclusive. Throws
/// InputError on an unknown --fail-on name (the values are checked by CompareOptions::validate).
Gate to_gate(const GateFlags& flags);

}  // namespace recompdiag::runner::cli
