#pragma once
// The checked-in A/B fixture runs (tests/fixtures/compare_*.jsonl): their synthetic options, in
// one place for the generator (tools/make_compare_fixtures.cpp) and the test that checks the
// checked-in files still match it.

#include <string>
#include <utility>
#include <vector>

#include "recompdiag/core/synthetic_run.h"

namespace recompdiag::test {

/// (file name, options) of every fixture; two phases of 100 steps each.
inline std::vector<std::pair<std::string, SyntheticRunOptions>> compare_fixtures() {
  SyntheticRunOptions base;
  base.phase_steps = {100, 100};
  base.seed = 1;
  SyntheticRunOptions rerun = base;  // same job again: only the noise differs
  rerun.seed = 2;
  SyntheticRunOptions slower = base;  // phase 2 slowed by 30%
  slower.seed = 3;
  slower.phase_scale = {1.0, 1.3};
  SyntheticRunOptions faster = base;  // both phases 25% faster
  faster.seed = 4;
  faster.phase_scale = {0.75, 0.75};
  return {{"compare_baseline.jsonl", base},
          {"compare_rerun.jsonl", rerun},
          {"compare_slower.jsonl", slower},
          {"compare_faster.jsonl", faster}};
}

}  // namespace recompdiag::test
