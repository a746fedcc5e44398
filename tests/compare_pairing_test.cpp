// What compare does with runs that took turns and with counts that differ: one pair is tested on
// its per-epoch ratios (the drift both runs saw cancels), the events a count adds are costed on
// the steps that carry them, and one independent run per side gives no time verdict until the
// run-to-run spread is measured.

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/noise_profile.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

constexpr int64_t kStepsPerEpoch = 10;

// One phase's shape: epochs of kStepsPerEpoch steps.
struct PhaseShape {
  int epochs = 20;
};

// A run in memory: `drift[k]` multiplies every step of global epoch k (the machine's state, shared
// by both runs of a pair), `scale` the whole run (what B changes), `noise` is each step's own
// log-normal sigma. Steps carry a jit section so that compiles can be planted.
RunFile make_run(const std::string& path, const std::vector<PhaseShape>& phases,
                 const std::vector<double>& drift, double scale, double noise, std::mt19937_64& rng,
                 double base_ms = 5.0) {
  RunFile run;
  run.path = path;
  run.header.mode = "mutable";
  run.header.config = {{"steps_per_epoch", kStepsPerEpoch}};
  std::normal_distribution<double> z(0.0, 1.0);
  int64_t step = 0;
  int epoch = 0;
  for (size_t p = 0; p < phases.size(); ++p) {
    for (int e = 0; e < phases[p].epochs; ++e, ++epoch) {
      for (int64_t i = 0; i < kStepsPerEpoch; ++i, ++step) {
        StepRecord s;
        s.step = step;
        s.phase = static_cast<int>(p) + 1;
        s.epoch = epoch;
        s.step_in_phase = e * kStepsPerEpoch + i;
        s.wall_ms = base_ms * scale * drift[static_cast<size_t>(epoch)] * std::exp(noise * z(rng));
        s.loss = 1.0;
        s.head_losses = {0.5, 0.5};
        s.loss_weights = {0.5, 0.5};
        s.jit = JitStats{};
        run.steps.push_back(s);
      }
    }
  }
  return run;
}

// Per-epoch drift factors: independent log-normal, sigma `spread` (a busy machine that changes
// from one epoch to the next).
std::vector<double> make_drift(int epochs, double spread, std::mt19937_64& rng) {
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> d;
  for (int k = 0; k < epochs; ++k) d.push_back(std::exp(spread * z(rng)));
  return d;
}

// A compile before the first step of `epoch` (global): the step pays `cost_ms` (the compile and
// the graph executor's profiling), with a compile event and the jit counters.
void plant_compile(RunFile& run, int epoch, double cost_ms) {
  for (StepRecord& s : run.steps) {
    if (s.epoch == epoch && s.step % kStepsPerEpoch == 0) {
      s.wall_ms += cost_ms;
      s.jit->compiles = 1;
      s.jit->plan_builds = 1;
      EventRecord e;
      e.kind = EventKind::kCompile;
      e.step = s.step;
      e.phase = s.phase;
      e.reason = "test";
      run.events.push_back(e);
      return;
    }
  }
}

}  // namespace

TEST_CASE(
    "one pair that took turns: the per-epoch interval covers the true ratio, the blocks do not "
    "fit") {
  // 200 pairs; every epoch both runs see the same drift (25% spread between epochs, far more
  // than the steps' own 4%), and B is truly 1.08x A.
  std::mt19937_64 rng(7);
  const double truth = 1.08;
  int covered_paired = 0;
  double width_paired = 0.0, width_blocks = 0.0;
  const int trials = 200;
  CompareOptions turns;
  turns.turns = true;
  CompareOptions blocks;
  blocks.run_noise = 0.0;  // what ab assumed before: runs that took turns share the machine
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> drift = make_drift(20, 0.25, rng);
    const RunFile a = make_run("a.jsonl", {{20}}, drift, 1.0, 0.04, rng);
    const RunFile b = make_run("b.jsonl", {{20}}, drift, truth, 0.04, rng);
    const Comparison cp = compare_runs(a, b, turns);
    REQUIRE(cp.phases.size() == 1);
    const PhaseComparison& p = cp.phases[0];
    REQUIRE(p.unit == ReplicationUnit::kEpochPairs);
    CHECK(p.epoch_pairs >= 15);
    covered_paired += p.test.low <= truth && truth <= p.test.high;
    width_paired += std::log(p.test.high / p.test.low) / trials;
    const Comparison cb = compare_runs(a, b, blocks);
    const PhaseComparison& q = cb.phases[0];
    REQUIRE(q.unit == ReplicationUnit::kBlocks);
    width_blocks += std::log(q.test.high / q.test.low) / trials;
  }
  const double coverage = static_cast<double>(covered_paired) / trials;
  INFO("paired coverage " << coverage << ", mean log width paired " << width_paired << " blocks "
                          << width_blocks);
  CHECK(coverage >= 0.90);
  CHECK(coverage <= 0.99);
  // The blocks resample A's and B's epochs as if unrelated: the shared drift makes them far wider.
  CHECK(width_blocks > 2.0 * width_paired);
}

TEST_CASE("runs that took turns: a 10% slowdown under heavy shared drift is a regression") {
  std::mt19937_64 rng(11);
  const std::vector<double> drift = make_drift(30, 0.25, rng);
  const RunFile a = make_run("a.jsonl", {{20}, {10}}, drift, 1.0, 0.04, rng);
  const RunFile b = make_run("b.jsonl", {{20}, {10}}, drift, 1.10, 0.04, rng);
  CompareOptions o;
  o.turns = true;
  const Comparison c = compare_runs(a, b, o);
  CHECK(c.verdict == Verdict::kRegression);
  for (const PhaseComparison& p : c.phases) {
    CHECK(p.unit == ReplicationUnit::kEpochPairs);
    CHECK(reports::phase_reason(p, c).find("epochs paired") != std::string::npos);
  }
}

TEST_CASE("runs whose epochs differ in number are not paired by epoch") {
  std::mt19937_64 rng(3);
  const std::vector<double> drift = make_drift(30, 0.0, rng);
  const RunFile a = make_run("a.jsonl", {{20}}, drift, 1.0, 0.04, rng);
  const RunFile b = make_run("b.jsonl", {{19}}, drift, 1.0, 0.04, rng);
  CompareOptions o;
  o.turns = true;
  o.run_noise = 0.02;
  CHECK(compare_runs(a, b, o).phases[0].unit == ReplicationUnit::kBlocks);
}

TEST_CASE("one independent run per side with no measured spread gives no time verdict") {
  std::mt19937_64 rng(5);
  const std::vector<double> flat(40, 1.0);
  const RunFile a = make_run("a.jsonl", {{20}, {20}}, flat, 1.0, 0.04, rng);
  const RunFile b = make_run("b.jsonl", {{20}, {20}}, flat, 1.5, 0.04, rng);
  const Comparison c = compare_runs(a, b);  // no turns, no run_noise
  CHECK(c.verdict == Verdict::kInconclusive);
  for (const PhaseComparison& p : c.phases) {
    CHECK(p.verdict == Verdict::kInconclusive);
    CHECK(reports::phase_reason(p, c).find("no measured run-to-run spread") != std::string::npos);
  }
  // With a measured spread of 3% the same 50% slowdown is proven.
  CompareOptions measured;
  measured.run_noise = 0.03;
  measured.run_noise_df = 9;
  CHECK(compare_runs(a, b, measured).verdict == Verdict::kRegression);
}

TEST_CASE("counted cost: extra compiles are priced at what their steps cost, with an interval") {
  // Phase 2 of B compiles before each of its 10 epochs, each costing 30 ms on top of 5 ms steps;
  // A compiles once at the start. B's 9 extra compiles cost 9 x 30 ms = 0.27 s, 54% of A's
  // phase (100 steps of 5 ms).
  std::mt19937_64 rng(13);
  const std::vector<double> flat(20, 1.0);
  RunFile a = make_run("a.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  for (RunFile* r : {&a, &b}) plant_compile(*r, 10, 30.0);
  for (int e = 11; e < 20; ++e) plant_compile(b, e, 30.0);
  CompareOptions o;
  o.turns = true;
  const Comparison c = compare_runs(a, b, o);
  REQUIRE(c.counted_costs.size() == 1);
  const CountedCost& cost = c.counted_costs[0];
  CHECK(cost.phase == 2);
  CHECK(cost.event_steps_a == doctest::Approx(1.0));
  CHECK(cost.event_steps_b == doctest::Approx(10.0));
  CHECK(cost.difference_s == doctest::Approx(0.27).epsilon(0.05));
  CHECK(cost.low_s < 0.27);
  CHECK(cost.high_s > 0.27);
  CHECK(cost.share == doctest::Approx(0.27 / (cost.phase_s_a)).epsilon(0.01));
  CHECK(cost.verdict == Verdict::kRegression);
  CHECK(reports::cost_causes(cost, c).find("9 more JIT compiles") != std::string::npos);
  const PhaseComparison& p2 = c.phases[1];
  CHECK(p2.verdict == Verdict::kRegression);
  CHECK(p2.counted_decides);
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(reports::summary(c).find("JIT compiles") != std::string::npos);
}

TEST_CASE(
    "counted cost: compile time between steps counts, and a cheap extra event decides nothing") {
  std::mt19937_64 rng(17);
  const std::vector<double> flat(20, 1.0);
  RunFile a = make_run("a.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  // One extra compile in B's phase 2 whose step costs nothing extra, but whose compile took
  // 200 ms between steps (the event's compile_ms): 0.2 s of a 0.5 s phase.
  plant_compile(b, 15, 0.0);
  b.events.back().detail = {{"compile_ms", 200.0}};
  CompareOptions o;
  o.turns = true;
  Comparison c = compare_runs(a, b, o);
  REQUIRE(c.counted_costs.size() == 1);
  CHECK(c.counted_costs[0].compile_s_b == doctest::Approx(0.2));
  CHECK(c.counted_costs[0].difference_s == doctest::Approx(0.2).epsilon(0.1));
  CHECK(c.counted_costs[0].verdict == Verdict::kRegression);

  // Without the compile time the extra event is cheap: counted, costed near zero, no verdict.
  b.events.back().detail = nlohmann::json::object();
  c = compare_runs(a, b, o);
  REQUIRE(c.counted_costs.size() == 1);
  CHECK(std::abs(c.counted_costs[0].share) < 0.05);
  CHECK(c.counted_costs[0].verdict == Verdict::kNoChange);
  CHECK_FALSE(c.phases[1].counted_decides);
}

TEST_CASE("counted cost: a difference against the counts is not their cost and decides nothing") {
  // A compiles at three epochs of phase 2, B at none; but B's steps at those places are far
  // slower (something else happened there, as the GPU check's first steps did: 1.1 s in one run
  // and 0.55 s in the other, beside 2 fewer cache misses). B has fewer events and is slower at
  // their steps: not what the events cost.
  std::mt19937_64 rng(21);
  const std::vector<double> flat(20, 1.0);
  RunFile a = make_run("a.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  for (int e : {12, 15, 18}) {
    plant_compile(a, e, 5.0);
    for (StepRecord& s : b.steps) {
      if (s.epoch == e && s.step % kStepsPerEpoch == 0) s.wall_ms += 200.0;
    }
  }
  CompareOptions o;
  o.turns = true;
  const Comparison c = compare_runs(a, b, o);
  REQUIRE(c.counted_costs.size() == 1);
  const CountedCost& cost = c.counted_costs[0];
  CHECK(cost.difference_s > 0.5);
  CHECK(cost.p < 0.05);
  CHECK(cost.against_counts);
  CHECK(cost.verdict == Verdict::kNoChange);
  CHECK_FALSE(c.phases[1].counted_decides);
  CHECK(reports::counted_cost_line(cost, c).find("against the counts (B has fewer of them)") !=
        std::string::npos);
}

TEST_CASE("counted cost: a count on every step is the steady test's, not costed") {
  std::mt19937_64 rng(19);
  const std::vector<double> flat(20, 1.0);
  const RunFile a = make_run("a.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  for (StepRecord& s : b.steps) {
    s.dispatch = DispatchStats{};
    s.dispatch->syncs = 1;
  }
  RunFile a2 = a;
  for (StepRecord& s : a2.steps) s.dispatch = DispatchStats{};
  CompareOptions o;
  o.turns = true;
  const Comparison c = compare_runs(a2, b, o);
  REQUIRE(!c.counted_costs.empty());
  for (const CountedCost& cost : c.counted_costs) {
    CHECK(cost.counts.empty());
    REQUIRE(cost.per_step_counts.size() == 1);
    CHECK(cost.per_step_counts[0] == "syncs");
    CHECK(cost.verdict == Verdict::kNoChange);
  }
}

TEST_CASE("a noise profile is measured from runs, written, read back and applied") {
  test::TempDir dir;
  std::mt19937_64 rng(23);
  std::vector<ColumnarRun> runs;
  for (int i = 0; i < 4; ++i) {
    const std::vector<double> flat(20, i % 2 ? 1.1 : 0.9);  // the runs land 10% apart
    RunFile r =
        make_run(dir.file("h" + std::to_string(i) + ".jsonl"), {{10}, {10}}, flat, 1.0, 0.01, rng);
    runs.push_back(to_columnar(r));
  }
  const NoiseProfile p = measure_noise_profile(runs);
  CHECK(p.runs == 4);
  CHECK(p.degrees_of_freedom == 3);
  REQUIRE(p.phases.size() == 2);
  CHECK(p.run_noise == doctest::Approx(0.11).epsilon(0.15));  // sd of log(0.9), log(1.1) x2
  write_noise_profile(p, dir.file("noise.json"));
  const NoiseProfile back = read_noise_profile(dir.file("noise.json"));
  CHECK(back.run_noise == doctest::Approx(p.run_noise));
  CHECK(back.degrees_of_freedom == 3);
  CompareOptions o;
  apply_noise_profile(back, "noise.json", o);
  REQUIRE(o.run_noise);
  CHECK(*o.run_noise == doctest::Approx(p.run_noise));
  CHECK(o.run_noise_df == 3.0);
  CHECK(o.run_noise_source.find("4 runs") != std::string::npos);

  CHECK_THROWS_AS(measure_noise_profile({runs[0], runs[1]}), InputError);
  test::write_text(dir.file("bad.json"), "{\"type\":\"noise_profile\",\"schema\":7}");
  CHECK_THROWS_AS(read_noise_profile(dir.file("bad.json")), InputError);
  test::write_text(dir.file("junk.json"), "not json");
  CHECK_THROWS_AS(read_noise_profile(dir.file("junk.json")), InputError);
  CHECK_THROWS_AS(read_noise_profile(dir.file("missing.json")), InputError);

  // An integer past its type's range is refused by name, not cast (1e19 into int64 is undefined).
  auto refusal = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json::parse(test::read_text(dir.file("noise.json")));
    if (std::string(key) == "phase")
      j["phases"][0]["phase"] = value;
    else
      j[key] = value;
    test::write_text(dir.file("edited.json"), j.dump());
    try {
      read_noise_profile(dir.file("edited.json"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refusal("degrees_of_freedom", 1e19).find("'degrees_of_freedom' is out of range") !=
        std::string::npos);
  CHECK(refusal("runs", 2.5).find("'runs' is not an integer") != std::string::npos);
  CHECK(refusal("phase", 4294967297LL).find("'phase' is out of range") != std::string::npos);
  CHECK(refusal("runs", 4.0).empty());
}

TEST_CASE("counted cost: a slow step both runs have, with the event on one side only, cancels") {
  // Both runs pay 30 ms at the first step of phase 2 (a warm-up both share); only B's step
  // carries a compile. The compile is counted, its cost is about zero: nothing to decide.
  std::mt19937_64 rng(29);
  const std::vector<double> flat(20, 1.0);
  RunFile a = make_run("a.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, flat, 1.0, 0.02, rng);
  plant_compile(b, 10, 30.0);
  for (StepRecord& s : a.steps) {
    if (s.epoch == 10 && s.step % kStepsPerEpoch == 0) s.wall_ms += 30.0;
  }
  CompareOptions o;
  o.turns = true;
  const Comparison c = compare_runs(a, b, o);
  REQUIRE(c.counted_costs.size() == 1);
  CHECK(c.counted_costs[0].event_steps_a == doctest::Approx(0.0));
  CHECK(c.counted_costs[0].event_steps_b == doctest::Approx(1.0));
  CHECK(std::abs(c.counted_costs[0].difference_s) < 0.005);
  CHECK(c.counted_costs[0].verdict == Verdict::kNoChange);
}

TEST_CASE("counted cost of a pair that took turns: drift both saw cancels epoch by epoch") {
  // Epochs swing 25% with the machine; B compiles before each of its 10 phase-2 epochs (A once),
  // each compile costing 10 ms on the step it precedes: 9 x 10 ms = 0.09 s, 18% of A's phase 2.
  std::mt19937_64 rng(31);
  const std::vector<double> drift = make_drift(20, 0.25, rng);
  RunFile a = make_run("a.jsonl", {{10}, {10}}, drift, 1.0, 0.02, rng);
  RunFile b = make_run("b.jsonl", {{10}, {10}}, drift, 1.0, 0.02, rng);
  for (RunFile* r : {&a, &b}) plant_compile(*r, 10, 10.0);
  for (int e = 11; e < 20; ++e) plant_compile(b, e, 10.0);
  CompareOptions turns;
  turns.turns = true;
  const Comparison paired = compare_runs(a, b, turns);
  CompareOptions independent;  // the same runs judged as if they had not taken turns
  independent.run_noise = 0.02;
  const Comparison unpaired = compare_runs(a, b, independent);
  REQUIRE(paired.counted_costs.size() == 1);
  REQUIRE(unpaired.counted_costs.size() == 1);
  const CountedCost& p = paired.counted_costs[0];
  const CountedCost& u = unpaired.counted_costs[0];
  CHECK(p.difference_s == doctest::Approx(0.09).epsilon(0.15));
  CHECK(p.low_s > 0.0);
  CHECK(p.verdict == Verdict::kRegression);
  // The per-epoch differences leave the drift out; the noise model of independent runs cannot.
  CHECK((p.high_s - p.low_s) < 0.5 * (u.high_s - u.low_s));
}
