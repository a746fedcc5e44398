#pragma once
/// \file
/// The CI gate: what a comparison's verdict exits with, `compare`'s and `ab`'s alike.
///
///     Gate gate;
///     gate.compare.fail_on = {"compiles"};
///     const Comparison c = compare_run_paths({"a.jsonl"}, {"b.jsonl"}, gate.compare);
///     return gate.exit_code(c, std::cerr);  // 0 pass, 1 fail

#include <iosfwd>

#include "recompdiag/core/compare.h"

namespace recompdiag::runner {

/// How a comparison is judged: its statistics' settings and what an inconclusive verdict exits
/// with. Plain data.
struct Gate {
  CompareOptions compare;
  /// An inconclusive verdict exits 1 (the default exits 0 with a warning).
  bool strict_inconclusive = false;

  /// exit_code_for(c, strict_inconclusive), having told `err` why when the verdict is
  /// inconclusive (one "recompdiag: warning:" line, and whether it exits 1 for it).
  int exit_code(const Comparison& c, std::ostream& err) const;
};

}  // namespace recompdiag::runner
