// compare_run_sets(): several runs per side with the run as the unit, the exact comparison of
// deterministic counts, and the inputs a gate must refuse.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "input_error.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

using test::input_error;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Writes `n` synthetic runs named PREFIX-i.jsonl with seeds from `first_seed`, and reads them.
std::vector<RunFile> runs(const test::TempDir& dir, const std::string& prefix, int n,
                          SyntheticRunOptions o, uint64_t first_seed) {
  std::vector<RunFile> out;
  for (int i = 0; i < n; ++i) {
    o.seed = first_seed + static_cast<uint64_t>(i);
    const std::string path = dir.file(prefix + "-" + std::to_string(i) + ".jsonl");
    write_synthetic_run(path, o);
    out.push_back(read_run_file(path));
  }
  return out;
}

SyntheticRunOptions small() {
  SyntheticRunOptions o;
  o.phase_steps = {120, 120};
  return o;
}

/// small() in mutable mode: nothing compiled, warmed up again or reset at the switch.
SyntheticRunOptions quiet_switch() {
  SyntheticRunOptions o = small();
  o.mode = "mutable";
  o.switch_compiles = 0;
  o.warmup_at_switch = false;
  o.optimizer_reset_at_switch = false;
  return o;
}

}  // namespace

TEST_CASE("three runs per side: the run is the unit, and reruns are proven equivalent") {
  test::TempDir dir;
  const Comparison c =
      compare_run_sets(runs(dir, "a", 3, small(), 1), runs(dir, "b", 3, small(), 11));
  CHECK(c.unit == ReplicationUnit::kRuns);
  CHECK(c.paths_a.size() == 3);
  CHECK(c.paths_b.size() == 3);
  CHECK(c.verdict == Verdict::kNoChange);
  REQUIRE(c.phases.size() == 2);
  for (const PhaseComparison& p : c.phases) {
    CHECK(p.unit == ReplicationUnit::kRuns);
    CHECK(p.test.n_a == 3);
    CHECK(p.run_medians_b_ms.size() == 3);
    CHECK(p.equivalent);
    CHECK(p.tost_p_holm < 0.05);
    CHECK(p.test.mde > 0.0);
    CHECK(p.test.mde < 0.05);
  }
  CHECK(c.count_changes.empty());
}

TEST_CASE("three runs per side: a 20% slower phase 2 is a regression, phase 1 no change") {
  test::TempDir dir;
  SyntheticRunOptions slow = small();
  slow.phase_scale = {1.0, 1.2};
  const Comparison c = compare_run_sets(runs(dir, "a", 3, small(), 1), runs(dir, "b", 3, slow, 11));
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(exit_code_for(c, false) == 1);
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[0].verdict == Verdict::kNoChange);
  CHECK(c.phases[1].verdict == Verdict::kRegression);
  CHECK(c.phases[1].ratio.ratio == doctest::Approx(1.2).epsilon(0.02));
  CHECK(c.phases[1].p_holm >= c.phases[1].test.p);  // Holm never lowers a p-value
  CHECK(contains(reports::phase_reason(c.phases[1], c), "3 vs 3 runs"));
}

TEST_CASE("three pairs of runs that shared a load: paired, the load cancels") {
  test::TempDir dir;
  SyntheticRunOptions o = small();
  std::vector<RunFile> a, b;
  const double load[] = {1.0, 1.4, 1.9};  // pair i ran on a machine this much slower
  for (int i = 0; i < 3; ++i) {
    o.phase_scale = {load[i], load[i]};
    o.seed = 10 + static_cast<uint64_t>(i);
    write_synthetic_run(dir.file("a" + std::to_string(i) + ".jsonl"), o);
    o.phase_scale = {load[i], load[i] * 1.15};  // B: phase 2 15% slower
    o.seed = 20 + static_cast<uint64_t>(i);
    write_synthetic_run(dir.file("b" + std::to_string(i) + ".jsonl"), o);
    a.push_back(read_run_file(dir.file("a" + std::to_string(i) + ".jsonl")));
    b.push_back(read_run_file(dir.file("b" + std::to_string(i) + ".jsonl")));
  }
  CompareOptions welch;
  const Comparison unpaired = compare_run_sets(a, b, welch);
  CHECK_FALSE(unpaired.phases[1].paired);
  CHECK(unpaired.phases[1].verdict != Verdict::kRegression);
  CompareOptions paired;
  paired.paired = true;
  const Comparison c = compare_run_sets(a, b, paired);
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[1].paired);
  CHECK(c.phases[1].ratio.ratio == doctest::Approx(1.15).epsilon(0.02));
  CHECK(c.phases[1].verdict == Verdict::kRegression);
  CHECK(contains(reports::phase_reason(c.phases[1], c), "3 pairs of runs"));
  CHECK(c.phases[0].verdict != Verdict::kRegression);
  // Sides of different sizes are never paired.
  b.pop_back();
  CHECK_FALSE(compare_run_sets(a, b, paired).phases[1].paired);
}

TEST_CASE("one new run against a stored baseline of several") {
  test::TempDir dir;
  const Comparison c =
      compare_run_sets(runs(dir, "a", 4, small(), 1), runs(dir, "b", 1, small(), 21));
  CHECK(c.unit == ReplicationUnit::kRuns);
  CHECK(c.phases[0].test.df == doctest::Approx(3.0));
  CHECK(c.verdict != Verdict::kRegression);
}

TEST_CASE("one run per side: blocks of consecutive steps, an epoch at least") {
  test::TempDir dir;
  const Comparison c =
      compare_run_sets(runs(dir, "a", 1, small(), 1), runs(dir, "b", 1, small(), 2));
  CHECK(c.unit == ReplicationUnit::kBlocks);
  for (const PhaseComparison& p : c.phases) {
    CHECK(p.block_steps_a >= 10);  // 120 steps: at most n / 8 per block, an epoch is 50
    CHECK(p.test.n_a >= 8);
    CHECK(p.verdict != Verdict::kRegression);
  }
}

TEST_CASE("counts are compared exactly: compiles at the switch are a finding, and can fail") {
  test::TempDir dir;
  const SyntheticRunOptions quiet = quiet_switch();
  SyntheticRunOptions recompiling = quiet;
  recompiling.switch_compiles = 2;
  const auto a = runs(dir, "a", 2, quiet, 1);
  const auto b = runs(dir, "b", 2, recompiling, 11);
  CompareOptions o;
  o.expected_differences = {"mode"};
  Comparison c = compare_run_sets(a, b, o);
  bool found = false;
  for (const CountChange& cc : c.count_changes) {
    if (cc.count == "jit_compiles") {
      found = true;
      CHECK(cc.phase == 2);
      CHECK(reports::count_change_line(cc) == "B: 2 more JIT compiles in phase 2 (0 -> 2)");
      CHECK_FALSE(cc.fails);
    }
  }
  CHECK(found);
  CHECK(c.verdict != Verdict::kRegression);  // timing alone: the same steady speed
  o.fail_on = parse_fail_on("compiles,syncs");
  c = compare_run_sets(a, b, o);
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(exit_code_for(c, false) == 1);
  CHECK(contains(reports::summary(c),
                 "2 more JIT compiles in phase 2 (0 -> 2) (--fail-on compiles)"));
  // Each question apart: the counts fail the gate, the step time does not.
  CHECK(c.counts_verdict == Verdict::kRegression);
  CHECK(c.step_time_verdict != Verdict::kRegression);
  // `compiles` is every compiler's: the JIT's part fails it, and the report lists that part.
  for (const CountChange& cc : c.count_changes) CHECK(cc.count != "compiles");
  // The part by its own name fails alike; another compiler's part does not.
  o.fail_on = parse_fail_on("jit_compiles");
  CHECK(compare_run_sets(a, b, o).verdict == Verdict::kRegression);
  o.fail_on = parse_fail_on("dynamo_compiles");
  CHECK(compare_run_sets(a, b, o).verdict != Verdict::kRegression);
  // Reversed, B has fewer: reported, never failing.
  o.fail_on = parse_fail_on("compiles");
  c = compare_run_sets(b, a, o);
  CHECK(c.verdict != Verdict::kRegression);
}

TEST_CASE("--fail-on names are checked") {
  CHECK(parse_fail_on("compiles,syncs") == std::vector<std::string>{"compiles", "syncs"});
  CHECK(parse_fail_on("").empty());
  CHECK(contains(input_error([] { parse_fail_on("compiles,sinks"); }),
                 "unknown count 'sinks' (accepted: compiles, jit_compiles, plan_builds"));
  // Every gate count is accepted, and has one line of help of its own.
  std::set<std::string> helps;
  for (const GateCount& count : gate_counts()) {
    CAPTURE(count.name);
    CHECK(parse_fail_on(count.name) == std::vector<std::string>{count.name});
    CHECK_FALSE(count.help.empty());
    CHECK(count.help.find('\n') == std::string::npos);
    CHECK(helps.insert(count.help).second);
  }
  CHECK(gate_counts().size() == count_names().size());
  CompareOptions o;
  o.fail_on = {"nope"};
  CHECK_THROWS_AS(o.validate(), InputError);
}

TEST_CASE("a side whose runs differ in configuration is refused, naming the file") {
  test::TempDir dir;
  auto a = runs(dir, "a", 2, small(), 1);
  SyntheticRunOptions other = small();
  other.mode = "mutable";
  auto odd = runs(dir, "odd", 1, other, 5);
  a.push_back(odd.front());
  const std::string msg = input_error([&] { compare_run_sets(a, runs(dir, "b", 2, small(), 11)); });
  CHECK(contains(msg, "odd-0.jsonl: its configuration differs from"));
  CHECK(contains(msg, "(the first run of side A) in mode"));
  // Seeds differ between replicate runs: that is fine.
  CHECK_NOTHROW(compare_run_sets(runs(dir, "s", 2, small(), 1), runs(dir, "t", 2, small(), 7)));
}

TEST_CASE("a file given twice, or an empty side, is refused") {
  test::TempDir dir;
  const auto a = runs(dir, "a", 2, small(), 1);
  std::vector<RunFile> twice = {a[0], a[1], a[0]};
  CHECK(contains(input_error([&] { compare_run_sets(twice, runs(dir, "b", 1, small(), 9)); }),
                 "the same file as"));
  CHECK(contains(input_error([&] { compare_run_sets(a, {}); }), "no run files for side B"));
}

TEST_CASE("a phase whose steady steps took 0 ms is bad input, not a NaN verdict") {
  test::TempDir dir;
  SyntheticRunOptions zero = small();
  zero.base_ms = 0.0;
  for (int runs_per_side : {1, 2}) {
    CAPTURE(runs_per_side);
    const std::string msg = input_error([&] {
      compare_run_sets(runs(dir, "z" + std::to_string(runs_per_side), runs_per_side, zero, 1),
                       runs(dir, "b" + std::to_string(runs_per_side), runs_per_side, small(), 5));
    });
    CHECK(contains(msg, "steady median step time is 0 ms"));
  }
}

TEST_CASE(
    "counted cost: compile time the compiler measured is a cost, at least, whatever the noise") {
  test::TempDir dir;
  SyntheticRunOptions quiet = quiet_switch();
  quiet.noise = 0.3;  // steps too noisy for the estimate to tell a compile's time from noise
  auto a = runs(dir, "a", 2, quiet, 1);
  auto b = runs(dir, "b", 2, quiet, 11);
  // B compiles at its switch under torch.compile, 60 ms by the compiler's own clock (its steps do
  // not show it: noise of this size could hide it), against A's phase 2 of about 600 ms.
  const int64_t switch_step = 120;
  for (RunFile& run : b) {
    for (StepRecord& step : run.steps) {
      step.compiled = CompiledStats{};
      if (step.step == switch_step) {
        step.compiled->compiles = 1;
        step.compiled->compile_ms = 60.0;
      }
    }
  }
  for (RunFile& run : a) {
    for (StepRecord& step : run.steps) step.compiled = CompiledStats{};
  }
  CompareOptions o;
  o.expected_differences = {"mode"};
  const Comparison c = compare_run_sets(a, b, o);
  const CountedCost* cost = nullptr;
  for (const CountedCost& cc : c.counted_costs) {
    if (cc.phase == 2) cost = &cc;
  }
  REQUIRE(cost != nullptr);
  CAPTURE(reports::counted_cost_line(*cost, c));
  CHECK(cost->measured_bounds);
  CHECK(cost->measured_s == doctest::Approx(0.060));
  CHECK(cost->low_s >= 0.060);
  CHECK(cost->difference_s >= 0.060);
  CHECK(cost->verdict == Verdict::kRegression);  // 60 ms of about 600: beyond 5%
  CHECK(contains(reports::counted_cost_line(*cost, c),
                 "cost at least 0.06 s compiling, as the compilers' own clocks "
                 "measured (the step times alone: "));
  // Against a threshold the bound does not reach, the bound alone decides nothing.
  o.threshold = 0.2;
  const Comparison loose = compare_run_sets(a, b, o);
  for (const CountedCost& cc : loose.counted_costs) {
    if (cc.phase == 2) CHECK(cc.verdict == Verdict::kNoChange);
  }
}

TEST_CASE("the compile ledger: graph breaks and cache misses compared exactly, where measured") {
  test::TempDir dir;
  auto a = runs(dir, "a", 2, quiet_switch(), 1);
  auto b = runs(dir, "b", 2, quiet_switch(), 11);
  // Both sides compile at step 0; B's cache is cold (3 misses, A's 3 hits) and B breaks its graph.
  const auto ledger = [](std::vector<RunFile>& side, bool cold) {
    for (RunFile& run : side) {
      for (StepRecord& step : run.steps) {
        step.compiled = CompiledStats{};
        step.compiled->ledger = true;
        if (step.step != 0) continue;
        step.compiled->compile_ids = 2;
        (cold ? step.compiled->fx_cache_misses : step.compiled->fx_cache_hits) = 2;
        (cold ? step.compiled->aot_cache_misses : step.compiled->aot_cache_hits) = 1;
        step.compiled->graph_breaks = cold ? 1 : 0;
      }
    }
  };
  ledger(a, false);
  ledger(b, true);
  CompareOptions o;
  o.expected_differences = {"mode"};
  o.fail_on = parse_fail_on("compile_cache_misses");
  Comparison c = compare_run_sets(a, b, o);
  bool misses = false;
  bool breaks = false;
  for (const CountChange& cc : c.count_changes) {
    CAPTURE(reports::count_change_line(cc));
    if (cc.count == "compile_cache_misses") {
      misses = true;
      CHECK(cc.phase == 1);
      CHECK(cc.a_max == 0);
      CHECK(cc.b_min == 3);
      CHECK(cc.fails);
    }
    if (cc.count == "graph_breaks") {
      breaks = true;
      CHECK_FALSE(cc.fails);  // reported; not named by --fail-on
    }
  }
  CHECK(misses);
  CHECK(breaks);
  CHECK(c.counts_verdict == Verdict::kRegression);

  // Without the ledger (a C++-only torch.compile probe) the counts were not measured: no change.
  for (auto* side : {&a, &b}) {
    for (RunFile& run : *side) {
      for (StepRecord& step : run.steps) step.compiled->ledger = false;
    }
  }
  c = compare_run_sets(a, b, o);
  for (const CountChange& cc : c.count_changes) {
    CHECK(cc.count != "compile_cache_misses");
    CHECK(cc.count != "graph_breaks");
  }
}

TEST_CASE("runs stopped at the switch: the phase no run has a step in is left out, with a warning") {
  test::TempDir dir;
  auto a = runs(dir, "a", 1, quiet_switch(), 1);
  auto b = runs(dir, "b", 1, quiet_switch(), 11);
  for (auto* side : {&a, &b}) {
    for (RunFile& run : *side) {
      // Killed after the phase_start event of phase 2, before its first step.
      run.steps.erase(std::remove_if(run.steps.begin(), run.steps.end(),
                                     [](const StepRecord& s) { return s.phase == 2; }),
                      run.steps.end());
      run.summary.reset();
    }
  }
  const Comparison c = compare_run_sets(a, b, CompareOptions{});
  REQUIRE(c.phases.size() == 1);
  CHECK(c.phases[0].phase == 1);
  bool warned = false;
  for (const std::string& w : reports::warnings(c)) warned |= contains(w, "phase 2 started");
  CHECK(warned);
  // One side with phase 2 steps and one without is still bad input, naming both.
  auto whole = runs(dir, "w", 1, quiet_switch(), 21);
  CHECK(contains(input_error([&] { compare_run_sets(whole, b, CompareOptions{}); }),
                 "no steps in phase 2"));
}
