// The exit code a verdict gives, for `compare` and `ab`.

#include "recompdiag/runner/gate.h"

#include <ostream>

#include "recompdiag/reports/words.h"

namespace recompdiag::runner {

int Gate::exit_code(const Comparison& c, std::ostream& err) const {
  if (c.verdict == Verdict::kInconclusive) {
    err << "recompdiag: warning: " << reports::summary(c)
        << (strict_inconclusive ? " (exit 1: --strict-inconclusive)"
                                : " (exit 0; --strict-inconclusive makes it 1)")
        << "\n";
  }
  return exit_code_for(c, strict_inconclusive);
}

}  // namespace recompdiag::runner
