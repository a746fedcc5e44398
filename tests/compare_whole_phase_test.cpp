// The whole-phase test of compare: a cost that sits in a few slow steps, which the steady median
// leaves out, is a regression when it recurs (every epoch), and not when it happened once.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// Two phases of 300 steps, 30 epochs of 10 steps, 5 ms steps with 4% noise; no run-to-run spread
// assumed (one synthetic run per side, as in compare_test).
RunFile synthetic(uint64_t seed) {
  test::TempDir dir;
  SyntheticRunOptions o;
  o.phase_steps = {300, 300};
  o.steps_per_epoch = 10;
  o.seed = seed;
  write_synthetic_run(dir.file("run.jsonl"), o);
  return read_run_file(dir.file("run.jsonl"));
}

CompareOptions no_run_spread() {
  CompareOptions o;
  o.run_noise = 0.0;
  return o;
}

// Adds `extra_ms` to the first step of every epoch of `phase` past the phase's first `skip` steps.
void slow_first_step_of_epochs(RunFile& run, int phase, double extra_ms, int64_t skip) {
  for (StepRecord& s : run.steps) {
    if (s.phase == phase && s.step_in_phase >= skip && s.step_in_phase % 10 == 0) {
      s.wall_ms += extra_ms;
    }
  }
}

}  // namespace

TEST_CASE("a slow step every epoch is a regression of the whole phase, not of its median") {
  const RunFile a = synthetic(1);
  RunFile b = synthetic(2);
  slow_first_step_of_epochs(b, 1, 25.0, 10);  // a compile before every epoch: +50% in total
  const Comparison c = compare_runs(a, b, no_run_spread());
  REQUIRE(c.phases.size() == 2);
  const PhaseComparison& p1 = c.phases[0];
  CHECK(p1.ratio.ratio < 1.05);  // the steady median barely moves
  CHECK(p1.whole_test.ratio > 1.3);
  CHECK(p1.whole_p_holm < 0.05);
  CHECK(p1.verdict == Verdict::kRegression);
  CHECK(p1.whole_decides);
  CHECK(c.phases[1].verdict != Verdict::kRegression);
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(reports::summary(c).rfind("regression: phase 1 regressed ", 0) == 0);
  CHECK(reports::summary(c).find("over all its steps") != std::string::npos);
  // Reversed, the fix is an improvement of the whole phase.
  const Comparison back = compare_runs(b, a, no_run_spread());
  CHECK(back.phases[0].verdict == Verdict::kImprovement);
  CHECK(back.phases[0].whole_decides);
}

TEST_CASE("one slow step, however slow, is not a regression of the whole phase") {
  const RunFile a = synthetic(1);
  RunFile b = synthetic(2);
  for (StepRecord& s : b.steps) {
    if (s.phase == 2 && s.step_in_phase == 150) s.wall_ms += 750.0;  // +50% of the phase, once
  }
  const Comparison c = compare_runs(a, b, no_run_spread());
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[1].whole_test.ratio > 1.3);
  CHECK(c.phases[1].whole_p_holm >= 0.05);
  CHECK(c.phases[1].verdict != Verdict::kRegression);
  CHECK(c.verdict != Verdict::kRegression);
}

TEST_CASE("with several runs per side the whole phase is tested across runs") {
  std::vector<RunFile> a, b;
  for (uint64_t seed : {1, 2, 3}) {
    a.push_back(synthetic(seed));
    b.push_back(synthetic(seed + 10));
    slow_first_step_of_epochs(b.back(), 2, 25.0, 10);
  }
  const Comparison c = compare_run_sets(a, b);
  REQUIRE(c.phases.size() == 2);
  const PhaseComparison& p2 = c.phases[1];
  CHECK(p2.unit == ReplicationUnit::kRuns);
  CHECK(p2.whole_test.n_a == 3);
  CHECK(p2.whole_test.ratio > 1.3);
  CHECK(p2.verdict == Verdict::kRegression);
  CHECK(p2.whole_decides);
  CHECK(c.phases[0].verdict != Verdict::kRegression);
}

TEST_CASE("the steady and whole-phase tests are adjusted together") {
  const RunFile a = synthetic(1);
  const RunFile b = synthetic(2);
  const Comparison c = compare_runs(a, b, no_run_spread());
  for (const PhaseComparison& p : c.phases) {
    CHECK(p.whole_p_holm >= p.whole_test.p);  // Holm never lowers a p-value
    CHECK_FALSE(p.whole_decides);
  }
  // Four tests: the smallest p is multiplied by four.
  double smallest = 1.0;
  for (const PhaseComparison& p : c.phases)
    smallest = std::min({smallest, p.test.p, p.whole_test.p});
  double smallest_adjusted = 1.0;
  for (const PhaseComparison& p : c.phases) {
    smallest_adjusted = std::min({smallest_adjusted, p.p_holm, p.whole_p_holm});
  }
  CHECK(smallest_adjusted == doctest::Approx(std::min(1.0, 4.0 * smallest)));
}
