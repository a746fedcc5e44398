// Run history's pure part: what it keeps of a run, the series of a history, the count change
// points found exactly with the causes that came with them, and the step-time ones sized.
#include "recompdiag/core/history.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"

using namespace recompdiag;
using nlohmann::json;

namespace {

// A run of `n` steps of `ms`, every step compiled-observed; `recompiles` steps from step 10 on
// recompile `forward` because its guard on L['scale'] failed.
RunFile run_of(int64_t n, double ms, int recompiles) {
  RunFile run;
  run.path = "run.jsonl";
  run.header.mode = "python";
  run.header.host = "ci-7";
  run.header.torch_version = "2.15.0";
  for (int64_t i = 0; i < n; ++i) {
    StepRecord s;
    s.step = i;
    s.step_in_phase = i;
    s.wall_ms = ms + 0.01 * static_cast<double>(i % 7);
    s.loss = 1.0;
    s.compiled = CompiledStats{};
    s.compiled->lookups = 1;
    s.compiled->region_runs = 1;
    s.compiled->ledger = true;
    run.steps.push_back(s);
  }
  for (int k = 0; k < recompiles; ++k) {
    const int64_t step = 10 + k;
    StepRecord& s = run.steps[static_cast<size_t>(step)];
    s.compiled->compiles = 1;
    s.compiled->recompiles = 1;
    s.compiled->compile_ms = 50.0;
    run.events.push_back({EventKind::kCompile, step, 1, "torch.compile recompiles forward",
                          json{{"compiler", "dynamo"},
                               {"function", "forward"},
                               {"file", "/src/model.py"},
                               {"line", 12},
                               {"guard_failures", {"0/1: L['scale'] == 0.5"}},
                               {"frame_compiles", k + 2},
                               {"cause", "python_number"}}});
  }
  return run;
}

HistoryRun kept(const RunFile& file, const std::string& commit) {
  HistoryRun r = history_run(analyze_run(file));
  r.commit = commit;
  return r;
}

// A history of one label set whose runs have `values` as phase 1's steady median.
std::vector<HistoryRun> timed(const std::vector<double>& values) {
  std::vector<HistoryRun> runs;
  for (size_t i = 0; i < values.size(); ++i) {
    HistoryRun r;
    r.commit = "c" + std::to_string(i);
    HistoryPhase p;
    p.steady_steps = 10;
    p.median_ms = values[i];
    r.phases.push_back(p);
    runs.push_back(r);
  }
  return runs;
}

const HistorySeries& series(const std::vector<HistorySeries>& all, const std::string& name) {
  for (const HistorySeries& s : all) {
    if (s.name == name) return s;
  }
  FAIL("no series " << name);
  return all.front();
}

}  // namespace

TEST_CASE("history_run: the steady median with its interval, the counts, totals and causes") {
  const HistoryRun r = kept(run_of(60, 4.0, 3), "abc");
  CHECK(r.host == "ci-7");
  CHECK(r.steps == 60);
  REQUIRE(r.phases.size() == 1);
  const HistoryPhase& p = r.phases[0];
  CHECK(p.steps == 60);
  CHECK(p.median_ms == doctest::Approx(4.03).epsilon(0.01));
  CHECK(p.low_ms <= p.median_ms);
  CHECK(p.high_ms >= p.median_ms);
  CHECK(p.high_ms > p.low_ms);
  CHECK(p.counts.at("dynamo_compiles") == 3);
  CHECK(p.counts.count("compiles") == 0);     // an umbrella repeats its parts
  CHECK(p.counts.count("plan_builds") == 0);  // no TorchScript probe: absent, never zero
  CHECK(r.totals.at("recompiles") == 3.0);
  CHECK(r.totals.at("compile_s") == doctest::Approx(0.15));
  REQUIRE(r.causes.size() == 1);
  CHECK(r.causes[0].kind == "guard");
  CHECK(r.causes[0].frame == "forward (model.py:12)");
  CHECK(r.causes[0].subject == "L['scale']");
  CHECK(r.causes[0].cause == "python_number");
  CHECK(r.causes[0].count == 3);
}

TEST_CASE("count change points: exact, with the guard that came with them") {
  std::vector<HistoryRun> runs;
  for (int i = 0; i < 6; ++i) runs.push_back(kept(run_of(40, 4.0, 0), "c" + std::to_string(i)));
  for (int i = 6; i < 10; ++i) runs.push_back(kept(run_of(40, 4.0, 3), "c" + std::to_string(i)));
  const std::vector<HistorySeries> all = history_series(runs);
  const HistorySeries& compiles = series(all, "phase 1 dynamo_compiles");
  CHECK(compiles.values.size() == 10);
  const std::vector<ChangePoint> cps = count_change_points(compiles);
  REQUIRE(cps.size() == 1);
  const ChangePoint& cp = cps[0];
  CHECK(cp.commit == "c6");
  CHECK(cp.id == "phase 1 dynamo_compiles@c6");
  CHECK(cp.regression);
  CHECK(cp.before == 0.0);
  CHECK(cp.after == 3.0);
  CHECK(std::isinf(cp.ratio));
  CHECK(cp.runs_before == 6);
  CHECK(cp.runs_after == 4);
  REQUIRE(cp.new_causes.size() == 1);
  CHECK(cp.new_causes[0].subject == "L['scale']");
  // A value that comes and goes is two change points, the second an improvement.
  std::vector<HistoryRun> back = runs;
  back.push_back(kept(run_of(40, 4.0, 0), "c10"));
  const std::vector<ChangePoint> two =
      count_change_points(series(history_series(back), "phase 1 dynamo_compiles"));
  REQUIRE(two.size() == 2);
  CHECK_FALSE(two[1].regression);
  CHECK(two[1].commit == "c10");
  CHECK(two[1].new_causes.empty());
}

TEST_CASE("history series: one per label set and phase, runs in store order") {
  std::vector<HistoryRun> runs = timed({4.0, 4.1, 4.0});
  runs[1].labels["job"] = "hf";
  const std::vector<HistorySeries> all = history_series(runs);
  const HistorySeries& plain = series(all, "phase 1 steady median ms");
  CHECK(plain.values == std::vector<double>{4.0, 4.0});
  CHECK(plain.runs[1]->commit == "c2");
  // A label set of one run is no series yet.
  for (const HistorySeries& s : all) CHECK(s.labels.empty());
}

TEST_CASE("size_change_points: the ratio of the segments with Welch's interval") {
  const std::vector<double> v = {10.0, 10.2, 9.9, 10.1, 10.0, 12.5, 12.4, 12.6, 12.5, 12.3};
  const std::vector<HistoryRun> runs = timed(v);
  const std::vector<HistorySeries> all = history_series(runs);
  const HistorySeries& s = series(all, "phase 1 steady median ms");
  const std::vector<ChangePoint> cps = size_change_points(s, {5});
  REQUIRE(cps.size() == 1);
  CHECK(cps[0].commit == "c5");
  CHECK(cps[0].regression);
  CHECK(cps[0].ratio == doctest::Approx(12.46 / 10.04).epsilon(0.002));
  CHECK(cps[0].low > 1.2);
  CHECK(cps[0].high < 1.27);
  CHECK(cps[0].p < 0.001);
  CHECK(cps[0].runs_before == 5);
  // A level Otava found whose interval includes no change is no regression, whatever its ratio.
  const std::vector<HistoryRun> noisy_runs = timed({10.0, 8.0, 12.0, 9.0, 11.0, 13.0, 9.0, 12.5});
  const std::vector<HistorySeries> noisy_all = history_series(noisy_runs);
  const std::vector<ChangePoint> noisy =
      size_change_points(series(noisy_all, "phase 1 steady median ms"), {4});
  REQUIRE(noisy.size() == 1);
  CHECK(noisy[0].ratio > 1.0);
  CHECK(noisy[0].low < 1.0);
  CHECK_FALSE(noisy[0].significant);
  CHECK_FALSE(noisy[0].regression);
  CHECK(std::string(noisy[0].word()) == "no sure change");
  CHECK(cps[0].significant);
  // A segment of one run cannot be sized.
  const std::vector<ChangePoint> lone = size_change_points(s, {9});
  REQUIRE(lone.size() == 1);
  CHECK(lone[0].runs_after == 1);
  CHECK(std::isinf(lone[0].high));
  CHECK(lone[0].p == 1.0);
  CHECK_FALSE(lone[0].regression);
}
