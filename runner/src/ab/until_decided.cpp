// `ab --until-decided`'s sequence: a pair at a time, each look at its spent level.

#include "recompdiag/runner/until_decided.h"

#include <string>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag::runner {

void check_max_pairs(int max_pairs) {
  if (!(max_pairs >= 2 && max_pairs <= 100)) {
    throw InputError("--max-pairs must be in [2, 100], got " + std::to_string(max_pairs));
  }
}

SequentialPairs run_until_decided(AbCommandsOptions pair, const CompareOptions& compare,
                                  int max_pairs) {
  check_max_pairs(max_pairs);
  pair.repeats = max_pairs;  // the files of pair k: NAME-k.jsonl
  SequentialPairs out;
  out.runs = run_ab_commands(pair, [&](const AbExperimentResult& so_far) {
    ++out.looks;
    CompareOptions look = compare;
    look.alpha = stats::sequential_look_alpha(compare.alpha, out.looks, max_pairs);
    out.level = look.alpha;
    out.comparison = compare_run_paths(so_far.a_paths, so_far.b_paths, look);
    if (out.looks == 1) out.first = out.comparison;
    return out.comparison.verdict == Verdict::kInconclusive;  // not settled: one more pair
  });
  return out;
}

}  // namespace recompdiag::runner
