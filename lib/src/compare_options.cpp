// A comparison's options (their checks) and the names and exit codes of its verdicts.
#include <algorithm>
#include <string>

#include "detail/compare_parts.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

void CompareOptions::validate() const {
  ratio_test().validate();
  if (run_noise) require_percentage("--run-noise", *run_noise, 0.0, 1.0, false, true);
  if (compile_spread) require_percentage("--compile-spread", *compile_spread, 0.0, 5.0, true, true);
  bootstrap.validate();
  analysis.validate();
  for (const std::string& name : fail_on) {
    const auto& names = count_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      parse_fail_on(name);  // throws naming the accepted counts
    }
  }
}

stats::RatioTestOptions CompareOptions::ratio_test() const {
  stats::RatioTestOptions o;
  o.confidence = bootstrap.confidence;
  o.alpha = alpha;
  o.threshold = threshold;
  o.power = power;
  return o;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNoChange:
      return "no_change";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "no_change";
}

const char* to_string(ReplicationUnit unit) {
  switch (unit) {
    case ReplicationUnit::kRuns:
      return "runs";
    case ReplicationUnit::kEpochPairs:
      return "epoch_pairs";
    case ReplicationUnit::kStepPairs:
      return "step_pairs";
    case ReplicationUnit::kBlocks:
      break;
  }
  return "blocks";
}

int exit_code_for(Verdict verdict) { return verdict == Verdict::kRegression ? 1 : 0; }

int exit_code_for(const Comparison& c, bool strict_inconclusive) {
  if (c.verdict == Verdict::kRegression) return 1;
  return strict_inconclusive && c.verdict == Verdict::kInconclusive ? 1 : 0;
}

}  // namespace recompdiag
