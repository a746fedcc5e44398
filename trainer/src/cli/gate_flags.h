#pragma once
// The gate's flags, shared by `compare` and `ab`: what counts as a regression (--threshold,
// --alpha, --fail-on, --strict-inconclusive) and the exit code a verdict gives.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "recompdiag/core/compare.h"

namespace recompdiag::trainer::cli {

struct GateFlags {
  double threshold_pct = 5.0;
  double alpha = 0.05;
  std::string fail_on;
  bool strict_inconclusive = false;
};

/// Adds --threshold, --alpha, --fail-on (its help lists gate_counts(), one line each) and
/// --strict-inconclusive to `cmd`, bound to `flags` (which must outlive parsing).
void add_gate_flags(CLI::App& cmd, GateFlags& flags);

/// Sets options.threshold, alpha and fail_on from the flags; throws InputError on an unknown
/// --fail-on name (the values are checked by CompareOptions::validate).
void apply_gate_flags(const GateFlags& flags, CompareOptions& options);

/// The exit code of `c` under the gate (exit_code_for), having told `err` why when it is not a
/// plain verdict: an inconclusive one, and whether it exits 1 for it.
int gate_exit_code(const Comparison& c, const GateFlags& flags, std::ostream& err);

}  // namespace recompdiag::trainer::cli
