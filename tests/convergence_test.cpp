#include "recompdiag/core/convergence.h"

#include <doctest/doctest.h>

#include <cmath>

#include "recompdiag/core/compare.h"
#include "recompdiag/reports/words.h"

using namespace recompdiag;

namespace {

// Phase 1: `n1` steps with weights [0.5, 0.5]; phase 2: head losses from `phase2` with [1, 0].
RunFile make_run(int n1, const std::vector<double>& phase2_cat) {
  RunFile run;
  int64_t step = 0;
  for (int i = 0; i < n1; ++i) {
    StepRecord s;
    s.step = step++;
    s.phase = 1;
    s.head_losses = {1.0, 3.0};  // loss under phase 2's weights [1, 0]: 1.0
    s.loss_weights = {0.5, 0.5};
    s.loss = 2.0;
    run.steps.push_back(s);
  }
  for (double cat : phase2_cat) {
    StepRecord s;
    s.step = step++;
    s.phase = 2;
    s.head_losses = {cat, 3.0};
    s.loss_weights = {1.0, 0.0};
    s.loss = cat;
    run.steps.push_back(s);
  }
  return run;
}

}  // namespace

TEST_CASE("convergence: the pre-switch loss is re-weighted with the new phase's weights") {
  ConvergenceOptions o;
  o.window = 2;
  // After the switch the loss jumps to 2, then falls back below 1 at the fourth step.
  const RunConvergence c = analyze_convergence(make_run(6, {2.0, 2.0, 1.0, 0.5, 0.5, 0.5}), o);
  REQUIRE(c.switches.size() == 1);
  CHECK(c.switches[0].switch_step == 6);
  CHECK(c.switches[0].loss_before == doctest::Approx(1.0));  // not 2.0, the phase 1 total
  CHECK(c.switches[0].loss_after == doctest::Approx(2.0));
  CHECK(c.switches[0].recovery_steps == 3);  // mean of steps 8-9: 0.75
  CHECK(c.final_loss == doctest::Approx(0.5));
  CHECK(c.final_head_losses == std::vector<double>{0.5, 3.0});
}

TEST_CASE("convergence: recovery is the first window whose exact mean is back, for any window") {
  // The brute force the analysis replaces with a running sum: every window's mean afresh.
  auto brute = [](const std::vector<double>& after, size_t w, double target) -> int64_t {
    for (size_t k = 0; k < after.size(); ++k) {
      const size_t from = k + 1 >= w ? k + 1 - w : 0;
      double sum = 0.0;
      size_t n = 0;
      for (size_t j = from; j <= k; ++j) {
        if (std::isfinite(after[j])) sum += after[j], ++n;
      }
      if (n > 0 && sum / static_cast<double>(n) <= target) return static_cast<int64_t>(k);
    }
    return -1;
  };
  uint64_t state = 12345;
  auto next = [&] {  // a small LCG: the same cases on every platform
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<double> after;
    const size_t n = 5 + static_cast<size_t>(next() * 300);
    for (size_t k = 0; k < n; ++k) {
      // Falling noisy losses around the target 1.0; ties at exactly 1.0, and some NaN.
      const double u = next();
      after.push_back(u < 0.05 ? std::nan("") : u < 0.15 ? 1.0 : 1.6 - k * 1.2 / n + 0.4 * next());
    }
    ConvergenceOptions o;
    o.window = 1 + round % 9;
    const RunConvergence c = analyze_convergence(make_run(4, after), o);
    REQUIRE(c.switches.size() == 1);
    INFO("round " << round << ", window " << o.window);
    CHECK(c.switches[0].recovery_steps == brute(after, static_cast<size_t>(o.window), 1.0));
  }
}

TEST_CASE("convergence: B worse in every pair is a regression; identical runs are no change") {
  ConvergenceOptions o;
  o.window = 2;
  const RunFile good = make_run(6, {1.0, 0.9, 0.8, 0.7, 0.6, 0.5});
  const RunFile bad = make_run(6, {3.0, 2.5, 2.0, 1.9, 1.8, 1.7});  // never recovers
  const ConvergenceComparison same = compare_convergence({good, good}, {good, good}, o);
  CHECK(same.verdict == ConvergenceVerdict::kNoChange);
  CHECK(same.worse_pairs == 0);
  const ConvergenceComparison worse = compare_convergence({good, good}, {bad, bad}, o);
  CHECK(worse.verdict == ConvergenceVerdict::kRegression);
  CHECK(worse.worse_pairs == 2);
  CHECK(worse.recovery_steps_b == doctest::Approx(6.0));  // never: the phase's length
  CHECK(worse.final_loss_change > 2.0);
  // One pair of two worse: not a regression.
  CHECK(compare_convergence({good, good}, {bad, good}, o).verdict == ConvergenceVerdict::kNoChange);
}

TEST_CASE("compare: a time regression names B's signal; a worse training joins the summary, untested") {
  const std::string dir = RECOMPDIAG_FIXTURES_DIR;
  const RunFile a = read_run_file(dir + "/compare_baseline.jsonl");
  RunFile b = read_run_file(dir + "/compare_slower.jsonl");  // phase 2 is 30% slower
  CompareOptions o;
  o.run_noise = 0.0;  // one synthetic run per side: no run-to-run spread (see compare_test)
  Comparison c = compare_runs(a, b, o);
  REQUIRE(c.verdict == Verdict::kRegression);
  CHECK(reports::summary(c).find("B: ") == std::string::npos);  // nothing in B's probes explains it
  CHECK(reports::summary(c).find("no probe signal differs") != std::string::npos);
  CHECK(c.convergence.verdict == ConvergenceVerdict::kNoChange);
  for (StepRecord& s : b.steps) {
    if (s.phase != 2) continue;
    if (s.dispatch) s.dispatch->syncs += 1;    // a host read in every observed step
    for (double& h : s.head_losses) h *= 3.0;  // and it learns worse
    s.loss *= 3.0;
  }
  c = compare_runs(a, b, o);
  REQUIRE(c.verdict == Verdict::kRegression);
  // The verdict line names the signal first: "regression: phase 2 regressed 30% in steady
  // state: B: ... extra host syncs ...".
  CHECK(reports::summary(c).rfind("regression: phase 2 regressed ", 0) == 0);
  CHECK(reports::summary(c).find("in steady state: B: ") != std::string::npos);
  CHECK(reports::summary(c).find("extra host syncs") != std::string::npos);
  // One pair: a difference no test across seeds backs, never a regression; it does not gate.
  CHECK(c.convergence.verdict == ConvergenceVerdict::kUntestedDifference);
  CHECK(reports::summary(c).find(
            "training quality: untested difference (B worse in its one pair") != std::string::npos);
  CHECK(reports::summary(c).find("quality does not gate") != std::string::npos);
  CHECK(reports::summary(c).rfind(reports::time_summary(c), 0) ==
        0);  // the timing sentence, then the quality
  CHECK(reports::time_summary(c).find("training quality") == std::string::npos);
}

namespace {

// Two phases of `epochs` epochs of 2 steps; phase 2's head losses are `cat` x the curve and `bin`
// x a flat 3.0 (weights [1, 0], so the binary head does not enter phase 2's loss).
RunFile run_with_heads(double cat, double bin, int epochs = 4) {
  RunFile run;
  int64_t step = 0;
  for (int phase = 1; phase <= 2; ++phase) {
    for (int e = 0; e < epochs; ++e) {
      for (int k = 0; k < 2; ++k) {
        StepRecord s;
        s.step = step++;
        s.phase = phase;
        s.epoch = e;
        const double curve = 1.0 / (1.0 + e);
        s.head_losses = {phase == 1 ? 1.0 : cat * curve, phase == 1 ? 3.0 : bin * 3.0};
        s.loss_weights = phase == 1 ? std::vector<double>{0.5, 0.5} : std::vector<double>{1, 0};
        s.loss = phase == 1 ? 2.0 : s.head_losses[0];
        run.steps.push_back(s);
      }
    }
  }
  return run;
}

const QualityMeasure& measure(const ConvergenceComparison& c, const std::string& name) {
  for (const QualityMeasure& m : c.measures) {
    if (m.name == name) return m;
  }
  FAIL("no measure " << name);
  return c.measures.front();
}

}  // namespace

TEST_CASE("convergence: the phase after a switch has its loss curve per epoch and its mean") {
  ConvergenceOptions o;
  o.window = 2;
  const RunConvergence c = analyze_convergence(run_with_heads(1.0, 1.0), o);
  REQUIRE(c.switches.size() == 1);
  const std::vector<double>& curve = c.switches[0].epoch_losses;
  REQUIRE(curve.size() == 4);
  for (size_t e = 0; e < curve.size(); ++e) CHECK(curve[e] == doctest::Approx(1.0 / (1.0 + e)));
  CHECK(c.switches[0].phase_loss == doctest::Approx((1.0 + 0.5 + 1.0 / 3 + 0.25) / 4));
}

TEST_CASE("convergence: a head that is worse in every seeded pair regresses, tested across pairs") {
  ConvergenceOptions o;
  o.window = 2;
  // B: phase 2's loss 20% lower, but the binary head's final loss 30-40% higher, in 3 pairs.
  const std::vector<RunFile> a = {run_with_heads(1.0, 1.0), run_with_heads(1.1, 0.9),
                                  run_with_heads(0.9, 1.1)};
  const std::vector<RunFile> b = {run_with_heads(0.8, 1.3), run_with_heads(0.88, 1.26),
                                  run_with_heads(0.72, 1.5)};
  const ConvergenceComparison c = compare_convergence(a, b, o);
  CHECK(c.tested);
  CHECK(c.verdict == ConvergenceVerdict::kRegression);
  const QualityMeasure& head2 = measure(c, "final_loss_head_2");
  CHECK(head2.regression);
  CHECK(head2.worse_pairs == 3);
  CHECK(head2.p < 0.05);
  const QualityMeasure& phase = measure(c, "last_phase_loss");
  CHECK_FALSE(phase.regression);
  CHECK(phase.better_pairs == 3);
  CHECK(phase.change == doctest::Approx(-0.2));
  CHECK(reports::convergence_summary(c).find("final loss of head 2 +") != std::string::npos);
  CHECK(reports::convergence_summary(c).find(
            "better in every pair: mean loss over phase 2 -20.0%") != std::string::npos);

  // The same changes in a random direction per pair: no test passes, no regression.
  const std::vector<RunFile> mixed = {run_with_heads(0.8, 1.3), run_with_heads(1.2, 0.7),
                                      run_with_heads(1.0, 1.05)};
  const ConvergenceComparison m = compare_convergence(a, mixed, o);
  CHECK(m.verdict == ConvergenceVerdict::kNoChange);
  for (const QualityMeasure& q : m.measures) CHECK_FALSE(q.regression);
}

TEST_CASE("convergence: one pair is untested; it regresses only by its final loss or recovery") {
  ConvergenceOptions o;
  o.window = 2;
  const ConvergenceComparison c =
      compare_convergence({run_with_heads(1.0, 1.0)}, {run_with_heads(1.0, 2.0)}, o);
  CHECK_FALSE(c.tested);
  CHECK(c.verdict == ConvergenceVerdict::kNoChange);  // only the unweighted head is worse
  CHECK(measure(c, "final_loss_head_2").worse_pairs == 1);
  CHECK(reports::convergence_summary(c).find("no test across seeds") != std::string::npos);
}
