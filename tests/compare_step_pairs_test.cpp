// Runs that took turns step by step on a machine whose speed jumps between levels: each step of A
// paired with the step of B beside it cancels the level, where an epoch of A and the epoch of B
// after it often sat on different levels.

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/reports/words.h"

using namespace recompdiag;

namespace {

constexpr int64_t kStepsPerEpoch = 10;

// The machine: a speed level (1, 2 or 2.4, as an idle 2-core VM's step times sit near 4.5, 9 and
// 11 ms) that holds for a geometric number of step slots with mean `dwell`, then jumps to
// another, whichever run is stepping.
struct LevelMachine {
  double dwell;
  std::mt19937_64 rng;
  double level = 1.0;
  double at(int64_t) {
    if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < 1.0 / dwell) {
      static constexpr double kLevels[] = {1.0, 2.0, 2.4};
      double next = level;
      while (next == level) next = kLevels[std::uniform_int_distribution<int>(0, 2)(rng)];
      level = next;
    }
    return level;
  }
};

RunFile empty_run(const std::string& path, int64_t turn_every_steps) {
  RunFile run;
  run.path = path;
  run.header.mode = "mutable";
  run.header.config = {{"steps_per_epoch", kStepsPerEpoch}};
  run.header.turn_every_steps = turn_every_steps;
  return run;
}

void add_step(RunFile& run, double wall_ms) {
  StepRecord s;
  s.step = static_cast<int64_t>(run.steps.size());
  s.phase = 1;
  s.epoch = static_cast<int>(s.step / kStepsPerEpoch);
  s.step_in_phase = s.step;
  s.wall_ms = wall_ms;
  s.loss = 1.0;
  s.head_losses = {0.5, 0.5};
  s.loss_weights = {0.5, 0.5};
  run.steps.push_back(s);
}

struct Pair {
  RunFile a, b;
};

// A and B of one pair on `machine`, B truly `truth` times A, each step with its own 4% noise.
// `turn_steps` steps per turn: 1 alternates step by step, kStepsPerEpoch epoch by epoch.
Pair take_turns(LevelMachine& machine, double truth, int64_t turn_steps, std::mt19937_64& rng,
                int epochs = 30) {
  std::normal_distribution<double> z(0.0, 0.04);
  Pair p{empty_run("a.jsonl", turn_steps == 1 ? 1 : 0),
         empty_run("b.jsonl", turn_steps == 1 ? 1 : 0)};
  int64_t slot = 0;
  for (int64_t turn = 0; turn < epochs * kStepsPerEpoch / turn_steps; ++turn) {
    for (RunFile* run : {&p.a, &p.b}) {
      const double scale = run == &p.b ? truth : 1.0;
      for (int64_t i = 0; i < turn_steps; ++i) {
        add_step(*run, 4.5 * scale * machine.at(slot++) * std::exp(z(rng)));
      }
    }
  }
  return p;
}

CompareOptions turns_options() {
  CompareOptions o;
  o.turns = true;
  return o;
}

}  // namespace

TEST_CASE(
    "level jumps: the step-paired interval covers the true ratio and is a fraction of the "
    "epoch-paired one's width") {
  std::mt19937_64 rng(11);
  LevelMachine machine{30.0, std::mt19937_64(5)};  // a level lasts 3 epochs' worth of steps
  const double truth = 1.08;
  const int trials = 200;
  const int epochs = 6;  // the gate bench's small config: 6 epochs of 10 steps in phase 1
  double width_steps = 0.0, width_epochs = 0.0;
  int covered_steps = 0;
  int covered_epochs = 0;
  for (int t = 0; t < trials; ++t) {
    const Pair s = take_turns(machine, truth, 1, rng, epochs);
    const Comparison cs = compare_runs(s.a, s.b, turns_options());
    REQUIRE(cs.phases.size() == 1);
    const PhaseComparison& ps = cs.phases[0];
    REQUIRE(ps.unit == ReplicationUnit::kStepPairs);
    CHECK(ps.step_pairs >= 20);
    CHECK(ps.pair_blocks >= 10);
    covered_steps += ps.test.low <= truth && truth <= ps.test.high;
    width_steps += std::log(ps.test.high / ps.test.low) / trials;

    const Pair e = take_turns(machine, truth, kStepsPerEpoch, rng, epochs);
    const Comparison ce = compare_runs(e.a, e.b, turns_options());
    const PhaseComparison& pe = ce.phases[0];
    REQUIRE(pe.unit == ReplicationUnit::kEpochPairs);
    covered_epochs += pe.test.low <= truth && truth <= pe.test.high;
    width_epochs += std::log(pe.test.high / pe.test.low) / trials;
  }
  const double step_coverage = static_cast<double>(covered_steps) / trials;
  const double epoch_coverage = static_cast<double>(covered_epochs) / trials;
  MESSAGE("coverage of a 95% interval: step pairs " << step_coverage << ", epoch pairs "
                                                    << epoch_coverage << "; mean log width "
                                                    << width_steps << " vs " << width_epochs);
  CHECK(step_coverage >= 0.90);
  CHECK(step_coverage <= 0.995);  // not so wide that it says nothing
  // Turns by epoch keep their nominal coverage here only by being wide: a jump between an epoch
  // of A and the epoch of B after it is a 2x outlier among a handful of epochs.
  CHECK(epoch_coverage >= 0.90);
  CHECK(width_epochs > 5.0 * width_steps);
}

TEST_CASE("level jumps: a 10% slowdown taken in turns step by step is a regression") {
  std::mt19937_64 rng(3);
  LevelMachine machine{30.0, std::mt19937_64(9)};
  int regressions = 0;
  int regressions_by_epoch = 0;
  int false_verdicts = 0;
  const int trials = 40;
  for (int t = 0; t < trials; ++t) {
    // The gate bench's small config: 6 epochs of 10 steps.
    const Pair slow = take_turns(machine, 1.10, 1, rng, 6);
    regressions += compare_runs(slow.a, slow.b, turns_options()).verdict == Verdict::kRegression;
    const Pair slow_epochs = take_turns(machine, 1.10, kStepsPerEpoch, rng, 6);
    regressions_by_epoch +=
        compare_runs(slow_epochs.a, slow_epochs.b, turns_options()).verdict == Verdict::kRegression;
    const Pair same = take_turns(machine, 1.0, 1, rng, 6);
    const Verdict v = compare_runs(same.a, same.b, turns_options()).verdict;
    false_verdicts += v == Verdict::kRegression || v == Verdict::kImprovement;
  }
  MESSAGE("10% slower: " << regressions << " of " << trials << " regressions ("
                         << regressions_by_epoch << " taking turns by epoch); healthy: "
                         << false_verdicts << " false verdicts");
  CHECK(regressions >= trials * 9 / 10);
  CHECK(regressions_by_epoch < regressions);
  CHECK(false_verdicts <= 2);
}

TEST_CASE("runs whose turn grains differ are not paired step by step") {
  std::mt19937_64 rng(1);
  LevelMachine machine{30.0, std::mt19937_64(2)};
  Pair p = take_turns(machine, 1.0, 1, rng);
  p.b.header.turn_every_steps = 2;
  const Comparison c = compare_runs(p.a, p.b, turns_options());
  CHECK(c.phases[0].unit == ReplicationUnit::kEpochPairs);
  // Without `turns` the headers alone pair nothing.
  p.b.header.turn_every_steps = 1;
  CHECK(compare_runs(p.a, p.b).phases[0].unit == ReplicationUnit::kBlocks);
}

TEST_CASE("paired blocks: a level lasting longer than a pair makes longer blocks") {
  // Pair log ratios that stay alike for 8 pairs at a time: blocks at least that long.
  std::mt19937_64 rng(4);
  std::normal_distribution<double> z(0.0, 0.01);
  std::vector<double> logs;
  for (int k = 0; k < 400; ++k) logs.push_back(((k / 8) % 2 ? 0.05 : -0.05) + z(rng));
  const stats::PairedBlocksTest t = stats::paired_blocks_ratio_test(logs);
  CHECK(t.pairs == 400);
  CHECK(t.block_length >= 8);
  CHECK(t.blocks == 400 / t.block_length);
  CHECK(t.test.n_a == t.blocks);
  // White pairs: short blocks.
  std::vector<double> white;
  for (int k = 0; k < 400; ++k) white.push_back(z(rng));
  CHECK(stats::paired_blocks_ratio_test(white).block_length <= 4);
  CHECK_THROWS_AS(stats::paired_blocks_ratio_test({0.1, 0.2}), std::invalid_argument);
}

TEST_CASE("ratio of sums: the ratio of the means, with an interval from the blocks") {
  const stats::RatioTest t = stats::ratio_of_sums_test({10, 20, 30, 40}, {11, 22, 33, 44});
  CHECK(t.ratio == doctest::Approx(1.1));
  CHECK(t.se_log == doctest::Approx(0.0));
  const stats::RatioTest u = stats::ratio_of_sums_test({10, 20, 30, 40}, {12, 21, 34, 43});
  CHECK(u.ratio == doctest::Approx(110.0 / 100.0));
  CHECK(u.low < 1.1);
  CHECK(u.high > 1.1);
  CHECK(u.df == doctest::Approx(3.0));
  CHECK_THROWS_AS(stats::ratio_of_sums_test({1}, {1}), std::invalid_argument);
  CHECK_THROWS_AS(stats::ratio_of_sums_test({1, 0}, {1, 1}), std::invalid_argument);
}

TEST_CASE("exact permutation tests: what a few runs' arrangement alone can say") {
  const stats::PermutationP split = stats::permutation_test({0.0, 0.01, 0.02}, {0.5, 0.51, 0.52});
  CHECK(split.exact);
  CHECK(split.p == doctest::Approx(2.0 / 20.0));  // the two most extreme of C(6, 3) splits
  CHECK(split.min_p == doctest::Approx(2.0 / 20.0));
  const stats::PermutationP mixed = stats::permutation_test({0.0, 0.5, 0.02}, {0.5, 0.01, 0.52});
  CHECK(mixed.p >= 0.5);
  const stats::PermutationP flips = stats::sign_flip_test({0.1, 0.2, 0.1, 0.3, 0.2, 0.1});
  CHECK(flips.p == doctest::Approx(2.0 / 64.0));
  CHECK(stats::sign_flip_test({0.1, -0.1}).p == doctest::Approx(1.0));
  CHECK_FALSE(
      stats::permutation_test(std::vector<double>(12, 0.0), std::vector<double>(12, 1.0)).exact);
}

namespace {

// One run of `epochs` x 10 steps, each epoch at `levels[epoch % size]` x 4.5 ms with 3% noise.
RunFile leveled_run(const std::string& path, const std::vector<double>& levels, int epochs,
                    std::mt19937_64& rng, int64_t turn_every_steps = 0) {
  std::normal_distribution<double> z(0.0, 0.03);
  RunFile run = empty_run(path, turn_every_steps);
  for (int64_t i = 0; i < epochs * kStepsPerEpoch; ++i) {
    add_step(run, 4.5 * levels[static_cast<size_t>(i / kStepsPerEpoch) % levels.size()] *
                      std::exp(z(rng)));
  }
  return run;
}

}  // namespace

TEST_CASE("three runs per side on two levels: no time verdict, whatever Welch's t says") {
  std::mt19937_64 rng(8);
  // Runs that jump between 4.5 and 9 ms as they run; A's spent most epochs low, B's high, so
  // A's medians sit near 4.5 ms and B's near 9: the machine, not B.
  std::vector<RunFile> a, b;
  for (int r = 0; r < 3; ++r) {
    a.push_back(leveled_run("a" + std::to_string(r) + ".jsonl", {1.0, 1.0, 2.0}, 21, rng));
    b.push_back(leveled_run("b" + std::to_string(r) + ".jsonl", {2.0, 2.0, 1.0}, 21, rng));
  }
  const Comparison c = compare_run_sets(a, b);
  REQUIRE(c.phases[0].unit == ReplicationUnit::kRuns);
  CHECK(c.phases[0].test.ratio > 1.8);
  CHECK(c.phases[0].test.p >= 0.1);  // 2 of C(6, 3) splits are as extreme
  CHECK(c.verdict == Verdict::kInconclusive);
  CHECK(c.phases[0].runs_needed >= 4);
  CHECK(c.phases[0].level_spread > 0.1);
}

TEST_CASE("pairs that took turns step by step on two levels: the pairs decide by their steps") {
  std::mt19937_64 rng(9);
  // Five pairs whose runs took turns step by step (their headers say so): the levels the machine
  // jumped between fell on both runs of a pair alike (each pair's own pattern: some medians sit
  // near 4.5 ms, some near 9), and B is 10% slower in every pair.
  const std::vector<std::vector<double>> patterns = {
      {1.0, 1.0, 2.0}, {2.0, 1.0, 1.0}, {1.0, 2.0, 2.0}, {2.0, 2.0, 1.0}, {1.0, 1.0, 1.0, 2.0}};
  auto pairs = [&](int64_t every, double slowdown, std::vector<RunFile>& a,
                   std::vector<RunFile>& b) {
    for (size_t r = 0; r < patterns.size(); ++r) {
      std::vector<double> slower;
      for (double level : patterns[r]) slower.push_back(slowdown * level);
      a.push_back(leveled_run("a" + std::to_string(r) + ".jsonl", patterns[r], 21, rng, every));
      b.push_back(leveled_run("b" + std::to_string(r) + ".jsonl", slower, 21, rng, every));
    }
  };
  std::vector<RunFile> a, b, a2, same;
  pairs(1, 1.1, a, b);
  pairs(1, 1.0, a2, same);
  CompareOptions turns;
  turns.turns = true;
  const Comparison c = compare_run_sets(a, b, turns);
  REQUIRE(c.phases[0].unit == ReplicationUnit::kRuns);
  CHECK(c.phases[0].pairs_by_steps);
  CHECK(c.phases[0].level_spread > 0.1);
  CHECK(c.phases[0].test.ratio == doctest::Approx(1.1).epsilon(0.02));
  CHECK(c.phases[0].test.p < 0.001);
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(compare_run_sets(a2, same, turns).verdict == Verdict::kNoChange);
  // Headers that record no step turns (epoch turns, or none): the levels need not have fallen on
  // both steps of a pair, and five pairs' sign flips cannot go below p = 1/16.
  std::vector<RunFile> ea, eb;
  pairs(0, 1.1, ea, eb);
  const Comparison epochs = compare_run_sets(ea, eb, turns);
  CHECK_FALSE(epochs.phases[0].pairs_by_steps);
  CHECK(epochs.phases[0].test.p >= 0.0625);
  CHECK(epochs.verdict == Verdict::kInconclusive);
  CHECK(epochs.phases[0].runs_needed >= 6);
  // Said only to be paired (side by side, not in turns): the same.
  CompareOptions paired;
  paired.paired = true;
  const Comparison p = compare_run_sets(a, b, paired);
  CHECK_FALSE(p.phases[0].pairs_by_steps);
  CHECK(p.phases[0].test.p >= 0.0625);
  CHECK(p.verdict == Verdict::kInconclusive);
}

TEST_CASE("pairs by steps: a run half on each level puts its median on either, its steps do not") {
  // A against itself, five pairs that took turns step by step on a machine that switched from
  // 4.5 to 9 ms halfway: B's steps ran just after A's, so B met the switch one step earlier. A's
  // median sits on the low level, B's on the high one, in every pair: the runs' medians would
  // call B twice as slow, consistently; its steps, each beside A's, say the same job.
  std::mt19937_64 rng(10);
  std::normal_distribution<double> z(0.0, 0.03);
  std::vector<RunFile> a, b;
  constexpr int kSteps = 211;  // the switch after step 105: A 106 low and 105 high, B 105 and 106
  for (int r = 0; r < 5; ++r) {
    a.push_back(empty_run("a" + std::to_string(r) + ".jsonl", 1));
    b.push_back(empty_run("b" + std::to_string(r) + ".jsonl", 1));
    for (int i = 0; i < kSteps; ++i) {
      add_step(a.back(), (i <= 105 ? 4.5 : 9.0) * std::exp(z(rng)));
      add_step(b.back(), (i <= 104 ? 4.5 : 9.0) * std::exp(z(rng)));
    }
  }
  CompareOptions turns;
  turns.turns = true;
  const Comparison c = compare_run_sets(a, b, turns);
  REQUIRE(c.phases[0].unit == ReplicationUnit::kRuns);
  // The trap is set: the runs' medians stand on different levels.
  CHECK(c.phases[0].median_b_ms / c.phases[0].median_a_ms > 1.5);
  CHECK(c.phases[0].pairs_by_steps);
  CHECK(c.phases[0].test.ratio == doctest::Approx(1.0).epsilon(0.02));
  CHECK(c.phases[0].verdict != Verdict::kRegression);
  CHECK(c.phases[0].verdict != Verdict::kImprovement);
}

TEST_CASE("a noise profile that the runs' own level jumps contradict licenses no verdict") {
  std::mt19937_64 rng(6);
  CompareOptions profile;
  profile.run_noise = 0.05;
  profile.run_noise_df = 4;
  // Runs that jump between 4.5 and 9 ms epoch by epoch: far beyond a 5% run-to-run spread.
  const RunFile a = leveled_run("a.jsonl", {1.0, 1.0, 2.0}, 30, rng);
  const RunFile b = leveled_run("b.jsonl", {2.0, 2.0, 1.0}, 30, rng);
  const Comparison c = compare_runs(a, b, profile);
  CHECK(c.phases[0].noise_contradicted);
  CHECK(c.phases[0].level_spread > 0.1);
  CHECK(c.verdict == Verdict::kInconclusive);
  CHECK(reports::phase_reason(c.phases[0], c).find("jump between levels") != std::string::npos);
  // Smooth runs: the profile stands, and a 2x slower B is a regression.
  const RunFile sa = leveled_run("a.jsonl", {1.0}, 30, rng);
  const RunFile sb = leveled_run("b.jsonl", {2.0}, 30, rng);
  const Comparison s = compare_runs(sa, sb, profile);
  CHECK_FALSE(s.phases[0].noise_contradicted);
  CHECK(s.verdict == Verdict::kRegression);
}

namespace {

// One pair of a compile-dominated job that took turns step by step: a first step of `compile_a`
// and `compile_b` ms (each a torch.compile compile), then 96 steady steps of ~0.7 ms alike.
Pair compile_dominated(double compile_a, double compile_b, uint64_t seed, bool same_compiles) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 0.03);
  Pair p{empty_run("a.jsonl", 1), empty_run("b.jsonl", 1)};
  for (int64_t i = 0; i < 97; ++i) {
    add_step(p.a, i == 0 ? compile_a : 0.7 * std::exp(z(rng)));
    add_step(p.b, i == 0 ? compile_b : 0.7 * std::exp(z(rng)));
  }
  for (RunFile* r : {&p.a, &p.b}) {
    r->steps[0].compiled = CompiledStats{};
    r->steps[0].compiled->compiles = 1;
    r->steps[0].compiled->compile_ms = r->steps[0].wall_ms;
  }
  if (!same_compiles) p.b.steps[0].compiled->compiles = 2;
  return p;
}

CompareOptions turns() {
  CompareOptions o;
  o.turns = true;
  return o;
}

}  // namespace

TEST_CASE("step pairs: one pair of compiles dominating the phase does not decide it") {
  // B's compile 5.6% longer than A's: one observation, the false regression.
  const Pair p = compile_dominated(800.0, 845.0, 3, true);
  const Comparison c = compare_runs(p.a, p.b, turns());
  REQUIRE(c.phases.size() == 1);
  const PhaseComparison& ph = c.phases[0];
  CHECK(ph.unit == ReplicationUnit::kStepPairs);
  CHECK(ph.matched_compile_pairs == 1);
  CHECK(ph.matched_compile_ratio == doctest::Approx(845.0 / 800.0));
  CHECK_FALSE(ph.whole_decides);
  CHECK_FALSE(ph.compile_time_decides);
  CHECK(ph.verdict != Verdict::kRegression);
  CHECK(c.verdict != Verdict::kRegression);
  // The whole-phase test is of the steady steps only now: about 1.
  CHECK(ph.whole_test.ratio == doctest::Approx(1.0).epsilon(0.03));
  bool said = false;
  for (const Caveat& cv : c.caveats) {
    if (const auto* m = std::get_if<caveats::MatchedCompiles>(&cv)) {
      said = true;
      CHECK(m->pairs == 1);
      CHECK_FALSE(m->spread.has_value());
      CHECK(m->share > 0.9);
    }
  }
  CHECK(said);
}

TEST_CASE("step pairs: the same compiles judged against a calibrated compile spread") {
  const Pair p = compile_dominated(800.0, 1200.0, 4, true);  // 50% longer
  CompareOptions o = turns();
  o.compile_spread = 0.05;  // a compile's time spreads 5% here
  o.compile_spread_df = 20;
  const Comparison c = compare_runs(p.a, p.b, o);
  CHECK(c.phases[0].compile_time_decides);
  CHECK(c.phases[0].verdict == Verdict::kRegression);
  CHECK(c.phases[0].decisive_ratio == doctest::Approx(1.5));
  o.compile_spread = 0.5;  // a spread this wide hides it
  const Comparison wide = compare_runs(p.a, p.b, o);
  CHECK_FALSE(wide.phases[0].compile_time_decides);
  CHECK(wide.phases[0].verdict != Verdict::kRegression);
}

TEST_CASE("step pairs: compiles that differ are left to the counted cost, not matched") {
  const Pair p = compile_dominated(800.0, 845.0, 5, false);
  const Comparison c = compare_runs(p.a, p.b, turns());
  CHECK(c.phases[0].matched_compile_pairs == 0);
}
