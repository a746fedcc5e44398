#include "recompdiag/core/analysis.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "recompdiag/core/health.h"
#include "recompdiag/reports/words.h"

using namespace recompdiag;

namespace {

// A run whose step times are given per phase; steps carry a jit and optimizer section.
RunFile make_run(const std::vector<std::vector<double>>& phases_ms) {
  RunFile run;
  run.path = "mem.jsonl";
  run.header.mode = "recompile";
  run.header.optimizer = "Adam";
  int64_t step = 0;
  for (size_t p = 0; p < phases_ms.size(); ++p) {
    const int phase = static_cast<int>(p) + 1;
    run.events.push_back({EventKind::kPhaseStart, step, phase, "", nlohmann::json::object()});
    for (size_t i = 0; i < phases_ms[p].size(); ++i, ++step) {
      StepRecord s;
      s.step = step;
      s.phase = phase;
      s.step_in_phase = static_cast<int64_t>(i);
      s.wall_ms = phases_ms[p][i];
      s.loss = phase == 1 ? 1.0 : 2.0;
      s.head_losses = {phase == 1 ? 0.5 : 0.8, 0.3};
      s.jit = JitStats{};
      s.optimizer = OptimizerStats{};
      run.steps.push_back(s);
    }
  }
  return run;
}

std::vector<double> steady(size_t n, double ms) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(ms * (1.0 + 0.01 * static_cast<double>(i % 3)));
  return v;
}

std::vector<double> concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool contains_text(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("warm-up steps are detected and kept out of the steady state") {
  RunFile run = make_run({concat({100, 50, 25}, steady(60, 10))});
  RunAnalysis a = analyze_run(run);
  REQUIRE(a.phases.size() == 1);
  const PhaseAnalysis& p = a.phases[0];
  CHECK(p.warmup_steps == 3);
  CHECK(p.steady.n == 60);
  CHECK(p.steady.median_ms == doctest::Approx(10.1));
  CHECK(p.all.max_ms == 100.0);
  CHECK(p.steady.max_ms == doctest::Approx(10.2));
  CHECK(p.steady.p95_ms == doctest::Approx(10.2));
  CHECK(p.warmup_extra_s == doctest::Approx((175.0 - 3 * 10.1) / 1000.0));
  CHECK(a.switches.empty());
}

TEST_CASE("a phase without warm-up has none, and warm-up never exceeds half the phase") {
  RunAnalysis flat = analyze_run(make_run({steady(40, 5)}));
  CHECK(flat.phases[0].warmup_steps == 0);
  // Slow throughout its first half, then fast: the cap holds.
  RunAnalysis slow = analyze_run(make_run({concat(std::vector<double>(40, 50.0), steady(30, 5))}));
  CHECK(slow.phases[0].warmup_steps == 35);
}

TEST_CASE("the switch cost is the time over the new phase's steady median until recovery") {
  RunFile run = make_run({steady(50, 10), concat({200, 100}, std::vector<double>(50, 12.0))});
  RunAnalysis a = analyze_run(run);
  REQUIRE(a.switches.size() == 1);
  const SwitchCost& sc = a.switches[0];
  CHECK(sc.from_phase == 1);
  CHECK(sc.to_phase == 2);
  CHECK(sc.switch_step == 50);
  CHECK(sc.recovery_steps == 2);
  CHECK(sc.extra_s == doctest::Approx(0.276));
  CHECK(sc.compile_s == 0.0);
  CHECK(sc.tax_s == doctest::Approx(0.276));
  CHECK(sc.first_step_ms == 200.0);
  CHECK(sc.first_step_ratio == doctest::Approx(200.0 / 12.0));
  // Loss jump: head 0 goes from 0.5 to 0.8, head 1 stays.
  REQUIRE(sc.loss.head_jump.size() == 2);
  CHECK(sc.loss.head_jump[0] == doctest::Approx(0.3));
  CHECK(sc.loss.head_jump[1] == doctest::Approx(0.0));
  CHECK(sc.loss.total_after - sc.loss.total_before == doctest::Approx(1.0));
}

TEST_CASE("compile time reported between steps is part of the recompile tax") {
  RunFile run = make_run({steady(50, 10), concat({200, 100}, std::vector<double>(50, 12.0))});
  run.events.push_back({EventKind::kCompile, 50, 2, "phase 2", {{"compile_ms", 1500.0}}});
  run.events.push_back({EventKind::kCompile, 0, 1, "initial", {{"compile_ms", 900.0}}});
  RunAnalysis a = analyze_run(run);
  REQUIRE(a.switches.size() == 1);
  CHECK(a.switches[0].compile_s == doctest::Approx(1.5));  // the initial compile is not a switch
  CHECK(a.switches[0].tax_s == doctest::Approx(1.776));
}

TEST_CASE("a slow stretch is attributed to the compiles and the optimizer reset at the switch") {
  RunFile run = make_run({steady(50, 10), concat({380, 370, 390}, std::vector<double>(50, 10.0))});
  // Two compiles with a reason, a reset optimizer, first-seen signatures on the switch step.
  run.events.push_back({EventKind::kCompile, 50, 2, "phase 2: loss weights changed", {}});
  run.events.push_back({EventKind::kCompile, 50, 2, "phase 2: loss weights changed", {}});
  run.steps[50].jit->compiles = 2;
  run.steps[50].optimizer->state_reset = true;
  run.steps[50].dispatch = DispatchStats{};
  run.steps[50].dispatch->new_signatures = 7;
  RunAnalysis a = analyze_run(run);
  REQUIRE(a.slow_stretches.size() == 1);
  const SlowStretch& s = a.slow_stretches[0];
  CHECK(s.first_step == 50);
  CHECK(s.last_step == 52);
  CHECK(s.mean_ratio == doctest::Approx(38.0));
  REQUIRE(s.signals.size() >= 3);
  CHECK(s.signals[0].kind == "jit_compiles");
  CHECK(s.signals[0].count == 2);
  CHECK(s.signals[1].kind == "optimizer_reset");
  CHECK(reports::stretch_sentence(s).rfind("steps 50-52 ran 38x the steady median", 0) == 0);
  CHECK(reports::stretch_sentence(s).find(
            "2 JIT compiles (reason: phase 2: loss weights changed)") != std::string::npos);
  CHECK(reports::stretch_sentence(s).find("Adam state reset") != std::string::npos);
  CHECK(reports::stretch_sentence(s).find("7 first-seen op signatures") != std::string::npos);

  const PhaseAnalysis& p2 = a.phases[1];
  CHECK(p2.counts.jit_compiles == 2);
  CHECK(p2.counts.compile_events == 2);
  CHECK(p2.counts.optimizer_resets == 1);
  CHECK(p2.counts.has_jit);
  CHECK(p2.counts.has_dispatch);
  CHECK_FALSE(p2.counts.has_cupti);
  CHECK(a.switches[0].around.jit_compiles == 2);
  CHECK(a.switches[0].around.new_signatures == 7);
  CHECK(a.compiles.size() == 2);
}

TEST_CASE("a slow stretch with no probe signal says so") {
  std::vector<double> ms = steady(60, 10);
  ms[40] = 80;
  RunAnalysis a = analyze_run(make_run({ms}));
  REQUIRE(a.slow_stretch_count == 1);
  CHECK(reports::stretch_sentence(a.slow_stretches[0]) ==
        "step 40 ran 7.9x the steady median (+0.0699 s); no probe signal coincides");
}

TEST_CASE("alerts from steps and events are listed once each") {
  RunFile run = make_run({steady(30, 10)});
  run.steps[5].alerts = {"compile_after_warmup"};
  run.events.push_back(
      {EventKind::kAlert, 5, 1, "compiled at step 5", {{"rule", "compile_after_warmup"}}});
  run.steps[9].alerts = {"host_sync"};
  RunAnalysis a = analyze_run(run);
  REQUIRE(a.alerts.size() == 2);
  CHECK(a.alerts[0].rule == "compile_after_warmup");
  CHECK(a.alerts[0].message == "compiled at step 5");
  CHECK(a.alerts[1].rule == "host_sync");
  CHECK(a.phases[0].counts.alerts == 2);
}

TEST_CASE("the outcome comes from the summary, else from the last step") {
  RunFile run = make_run({steady(10, 1), steady(10, 1)});
  RunAnalysis unfinished = analyze_run(run);
  CHECK_FALSE(unfinished.outcome.finished);
  CHECK(unfinished.outcome.final_head_losses == std::vector<double>{0.8, 0.3});
  REQUIRE_FALSE(unfinished.warnings.empty());
  CHECK(unfinished.warnings.back().find("did not finish") != std::string::npos);
  RunSummary summary;
  summary.final_loss = 0.25;
  summary.final_head_losses = {0.2, 0.1};
  run.summary = summary;
  RunAnalysis finished = analyze_run(run);
  CHECK(finished.outcome.finished);
  CHECK(finished.outcome.final_loss == 0.25);
  CHECK(finished.outcome.final_head_losses == std::vector<double>{0.2, 0.1});
  CHECK(finished.phases[0].final_head_losses == std::vector<double>{0.5, 0.3});
}

TEST_CASE("long runs are bucketed for the charts") {
  RunFile run = make_run({steady(5000, 2), steady(5000, 3)});
  AnalysisOptions o;
  o.chart_points = 100;
  RunAnalysis a = analyze_run(run, o);
  REQUIRE(a.chart.size() == 100);
  CHECK(a.chart[0].first_step == 0);
  CHECK(a.chart[0].last_step == 99);
  CHECK(a.chart.back().last_step == 9999);
  CHECK(a.chart.back().phase == 2);
  CHECK(a.chart[0].wall_min_ms == doctest::Approx(2.0));
  CHECK(a.chart[0].wall_max_ms == doctest::Approx(2.04));
  // Short runs get one point per step.
  CHECK(analyze_run(make_run({steady(30, 1)})).chart.size() == 30);
}

TEST_CASE("a run without steps analyzes to nothing") {
  RunFile run;
  run.path = "empty.jsonl";
  RunAnalysis a = analyze_run(run);
  CHECK(a.steps == 0);
  CHECK(a.phases.empty());
  CHECK(a.chart.empty());
}

TEST_CASE(
    "the recovery after a switch is one stretch that carries the compile, even if its first "
    "step is not slow") {
  // A profiling run at normal speed, then the plan build: only steps 51-52 are slow, but the
  // compile is logged at step 50. The warm-up holds all three, so the stretch names the compile.
  RunFile run = make_run({steady(50, 10), concat({10, 19, 29}, steady(50, 10))});
  run.header.optimizer = "Adam";  // the header names it; the config layout is not consulted
  run.header.config = {{"adam", {{"beta1", 0.9}}}};
  run.events.push_back({EventKind::kCompile, 50, 2, "phase 2: loss weights changed", {}});
  run.steps[50].optimizer->state_reset = true;
  RunAnalysis a = analyze_run(run);
  CHECK(a.phases[1].warmup_steps == 3);
  REQUIRE(a.slow_stretches.size() == 1);
  const SlowStretch& s = a.slow_stretches[0];
  CHECK(s.first_step == 50);
  CHECK(s.last_step == 52);
  CHECK(s.signals.at(0).kind == "jit_compiles");
  CHECK(contains_text(reports::stretch_sentence(s),
                      "1 JIT compile (reason: phase 2: loss weights changed)"));
  CHECK(contains_text(reports::stretch_sentence(s), "Adam state reset"));
}

TEST_CASE("slow steps one step apart form one stretch; further apart, two") {
  std::vector<double> ms = steady(60, 10);
  ms[30] = 20;
  ms[32] = 20;
  RunAnalysis merged = analyze_run(make_run({ms}));
  REQUIRE(merged.slow_stretch_count == 1);
  CHECK(merged.slow_stretches[0].first_step == 30);
  CHECK(merged.slow_stretches[0].last_step == 32);
  ms[32] = 10.1;
  ms[33] = 20;
  RunAnalysis split = analyze_run(make_run({ms}));
  CHECK(split.slow_stretch_count == 2);
  AnalysisOptions strict;
  strict.slow_factor = 2.5;  // 2x steps are no longer slow
  CHECK(analyze_run(make_run({ms}), strict).slow_stretch_count == 0);
}

TEST_CASE("the reports' probe counts: one row each, distinct keys and labels and members") {
  std::set<std::string> keys, labels;
  std::vector<int64_t ProbeCounts::*> members;  // member pointers have == but no <
  for (const ProbeCountField& f : kProbeCountFields) {
    CAPTURE(f.key);
    CHECK(keys.insert(f.key).second);
    CHECK(labels.insert(f.label).second);
    CHECK(std::find(members.begin(), members.end(), f.value) == members.end());
    members.push_back(f.value);
  }
  // A probe's count reads as measured exactly when that probe's flag is set.
  ProbeCounts c;
  c.jit_plan_builds = 7;
  for (const ProbeCountField& f : kProbeCountFields) {
    if (std::string(f.key) != "jit_plan_builds") continue;
    REQUIRE(f.measured != nullptr);
    CHECK_FALSE(c.*f.measured);
    c.has_jit = true;
    CHECK(c.*f.measured);
    CHECK(c.*f.value == 7);
  }
  CHECK(c.has_jit);  // the row was found
}

TEST_CASE("every count of kProbeCounts: a distinct key, member and signal kind") {
  std::set<std::string> keys, labels, kinds;
  std::vector<int64_t ProbeCounts::*> members;
  for (const ProbeCountField& f : kProbeCounts) {
    CAPTURE(f.key);
    CHECK(keys.insert(f.key).second);
    CHECK(labels.insert(f.label).second);
    if (f.value == nullptr) {  // an umbrella: its parts' sum, never reported
      CHECK_FALSE(f.reported);
      CHECK_FALSE(static_cast<bool>(f.source.value));
      continue;
    }
    CHECK(std::find(members.begin(), members.end(), f.value) == members.end());
    members.push_back(f.value);
    if (f.signal.kind != nullptr) {
      CHECK(kinds.insert(f.signal.kind).second);
      CHECK(f.signal.weight > 0.0);
    }
    // A count read from a section says whether the run measured it.
    if (f.source.present != nullptr) CHECK(f.measured != nullptr);
  }
  // The reports list the reported ones, in the table's order.
  size_t next = 0;
  for (const ProbeCountField& f : kProbeCounts) {
    if (!f.reported) continue;
    REQUIRE(next < kProbeCountFields.size());
    CHECK(std::string(kProbeCountFields[next++].key) == f.key);
  }
  CHECK(next == kProbeCountFields.size());
}

namespace {

// A phase of `n` steps with every counted section: integer fields that grow by a step's index
// (runs of alike steps, added in closed form) or jump (runs of one), flags and lrs that change
// now and then, a dispatcher that samples some steps only, and alerts.
RunFile counted_run(size_t n) {
  RunFile run = make_run({steady(n, 10)});
  for (size_t i = 0; i < n; ++i) {
    StepRecord& s = run.steps[i];
    const auto k = static_cast<int64_t>(i);
    s.jit->compiles = i % 17 == 0 ? 1 : 0;
    s.jit->plan_builds = k / 10;
    s.jit->profiling_runs = i < 20 ? k : 3;
    s.dispatch = DispatchStats{};
    s.dispatch->sampled = i < 30 || i % 5 == 0;
    s.dispatch->new_signatures = 40 - k % 40;
    s.dispatch->host_ops = 2;
    s.dispatch->copies_h2d = k;
    s.dispatch->copies_d2h = 1;
    s.dispatch->copies_d2d = i % 2;
    s.dispatch->bytes_h2d = 1000 * k;
    s.dispatch->bytes_d2h = 7;
    s.dispatch->syncs = 3 + k / 25;
    s.cupti = CuptiStats{};
    s.cupti->new_kernels = i < 10 ? 10 - k : 0;
    s.cupti->module_loads = i == 40 ? 2 : 0;
    s.cupti->graph_instantiations = k / 30;
    s.optimizer->state_reset = i == 12 || i == 13 || i == 70;
    s.optimizer->state_off_device = i < 50 ? k : 0;  // largest at the end of a run
    s.optimizer->state_missing = i % 11;
    s.optimizer->state_dtype_mismatch = i > 60 ? 1 : 0;
    s.optimizer->lr_requested = 1e-3;
    s.optimizer->lr_effective = i >= 45 && i < 55 ? 1e-4 : 1e-3;
    s.memory = MemoryStats{};
    s.memory->resident_bytes = 1000 + 10 * k;
    s.compiled = CompiledStats{};
    s.compiled->compiles = i % 13 == 0 ? 2 : 0;
    s.compiled->recompiles = i % 26 == 0 ? 1 : 0;
    s.compiled->eager_fallbacks = i > 70 ? 1 : 0;
    s.compiled->ledger = true;
    s.compiled->graph_breaks = i % 17 == 0 ? 1 : 0;
    s.compiled->fx_cache_misses = i % 13 == 0 ? 2 : 0;
    s.compiled->aot_cache_misses = i % 13 == 0 ? 1 : 0;
    if (i % 9 == 0) s.alerts.push_back(i % 2 ? rules::kSlowStep : rules::kMemoryGrowth);
  }
  return run;
}

}  // namespace

TEST_CASE(
    "probe counts: each count of the table adds up as its line says, alike steps in closed form") {
  const size_t n = 90;
  const RunFile run = counted_run(n);
  const RunAnalysis analysis = analyze_run(run);  // held: the counts are a reference into it
  const ProbeCounts& c = analysis.phases.at(0).counts;
  REQUIRE(c.steps == static_cast<int64_t>(n));
  // Each count step by step from the records, as its line of the table says.
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.source.present == nullptr) continue;
    CAPTURE(f.key);
    int64_t expected = 0;
    for (const StepRecord& s : run.steps) {
      if (!f.source.present(s)) continue;
      const int64_t v = f.source.value(s);
      if (f.aggregate == CountAggregate::kSum) expected += v;
      if (f.aggregate == CountAggregate::kMax) expected = std::max(expected, v);
      if (f.aggregate == CountAggregate::kSteps) expected += v != 0;
    }
    CHECK(c.*f.value == expected);
    CHECK(c.*f.measured);
  }
  // And from the fields themselves: the table reads the right ones.
  int64_t copies = 0, bytes = 0, signatures = 0, off_device = 0;
  for (const StepRecord& s : run.steps) {
    off_device = std::max(off_device, s.optimizer->state_off_device);
    if (!s.dispatch->sampled) continue;  // unsampled steps hold no counts
    copies += s.dispatch->copies_h2d + s.dispatch->copies_d2h + s.dispatch->copies_d2d;
    bytes += s.dispatch->bytes_h2d + s.dispatch->bytes_d2h + s.dispatch->bytes_d2d;
    signatures += s.dispatch->new_signatures;
  }
  CHECK(c.copies == copies);
  CHECK(c.copy_bytes == bytes);
  CHECK(c.new_signatures == signatures);
  CHECK(c.optimizer_state_off_device == off_device);
  CHECK(c.graph_breaks == 6);               // steps 0, 17, ..., 85
  CHECK(c.compile_cache_misses == 7 * 3);   // steps 0, 13, ..., 78: 2 FX-graph + 1 AOTAutograd
  CHECK(c.optimizer_resets == 3);
  CHECK(c.lr_not_in_effect == 10);
  CHECK(c.lr_requested == doctest::Approx(1e-3));
  CHECK(c.lr_effective == doctest::Approx(1e-4));
  CHECK(c.alerts == 10);
  CHECK(c.slow_step_alerts == 5);
  CHECK(c.memory_growth_alerts == 5);
  CHECK(c.resident_first_bytes == 1000);
  CHECK(c.resident_last_bytes == 1000 + 10 * static_cast<int64_t>(n - 1));
  CHECK_FALSE(ProbeCounts{}.has_optimizer);
}

TEST_CASE("syncs and copies: the dispatcher's where it runs, CUPTI's where it does not, never both") {
  // Two probes see one sync from two layers: the dispatcher as an op, CUPTI as a CUDA call.
  const auto counts = [](bool dispatcher, bool cupti) {
    RunFile run = make_run({steady(20, 10)});
    for (StepRecord& s : run.steps) {
      s.dispatch.reset();
      if (dispatcher) {
        s.dispatch = DispatchStats{};
        s.dispatch->syncs = 2;
        s.dispatch->copies_d2h = 1;
        s.dispatch->bytes_d2h = 4;
      }
      if (cupti) {
        s.cupti = CuptiStats{};
        s.cupti->syncs = 3;
        s.cupti->memcpy_d2h = 1;
        s.cupti->memcpy_h2d = 1;
        s.cupti->bytes_d2h = 4;
      }
    }
    return analyze_run(run).phases.at(0).counts;
  };
  const ProbeCounts both = counts(true, true);
  CHECK(both.has_transfers);
  CHECK(both.syncs == 20 * 2);
  CHECK(both.copies == 20 * 1);
  CHECK(both.copy_bytes == 20 * 4);
  const ProbeCounts cupti_only = counts(false, true);
  CHECK(cupti_only.has_transfers);
  CHECK_FALSE(cupti_only.has_dispatch);
  CHECK(cupti_only.syncs == 20 * 3);
  CHECK(cupti_only.copies == 20 * 2);
  const ProbeCounts neither = counts(false, false);
  CHECK_FALSE(neither.has_transfers);
  CHECK(neither.syncs == 0);
  // The gate and the counted cost read the same definition: one source per count.
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.gate.name == nullptr || std::string(f.gate.name) != "syncs") continue;
    StepRecord step;
    step.cupti = CuptiStats{};
    step.cupti->syncs = 3;
    CHECK(f.source.value(step) == 3);
    step.dispatch = DispatchStats{};
    step.dispatch->syncs = 2;
    CHECK(f.source.value(step) == 2);
    CHECK(f.gate.costed);
    CHECK_FALSE(static_cast<bool>(f.gate.events));
  }
}

TEST_CASE("umbrellas: cache_misses() is the sum of the counts that are its parts") {
  ProbeCounts c;
  c.jit_plan_builds = 1;
  c.new_signatures = 10;
  c.new_kernels = 100;
  c.module_loads = 1000;
  c.graph_instantiations = 10000;
  c.syncs = 7;  // no part
  CHECK(c.cache_misses() == 11111);
  std::set<std::string> parts;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of != nullptr && std::string(f.part_of) == kCacheMissesUmbrella) parts.insert(f.key);
  }
  CHECK(parts == std::set<std::string>{"jit_plan_builds", "new_signatures", "new_kernels",
                                       "module_loads", "graph_instantiations"});
}

TEST_CASE("lr_not_in_effect: the analysis counts the steps on which the health rule alerts") {
  RunFile run = make_run({steady(30, 10)});
  HealthOptions options;
  options.repeat_after_steps = 0;  // every step's alert
  HealthMonitor health(options);
  int64_t alerted = 0;
  for (size_t i = 0; i < run.steps.size(); ++i) {
    OptimizerStats& o = *run.steps[i].optimizer;
    // Off by 0.1 ppm per step: within the default tolerance of 1 ppm up to step 10, beyond it
    // after.
    o.lr_requested = 1e-3;
    o.lr_effective = 1e-3 * (1.0 + 1e-7 * static_cast<double>(i));
    for (const Alert& a : health.evaluate(run.steps[i])) alerted += a.rule == rules::kLrNotInEffect;
  }
  CHECK(alerted > 0);
  CHECK(alerted < 30);
  CHECK(analyze_run(run).phases.at(0).counts.lr_not_in_effect == alerted);
  // The health rule's own tolerance is the one it applies.
  const OptimizerStats& last = *run.steps.back().optimizer;
  CHECK_FALSE(lr_in_effect(last));
  CHECK(lr_in_effect(last, 1e-5));
  OptimizerStats none;  // no lr requested: nothing to check
  none.lr_effective = 5.0;
  CHECK(lr_in_effect(none));
}

TEST_CASE("signals of equal score: the costlier kind of event first") {
  // One optimizer reset (weight 200) and four plan builds (weight 50) score the same.
  RunFile run = make_run({steady(50, 10), concat({300}, steady(50, 10))});
  run.steps[50].jit->plan_builds = 4;
  run.steps[50].optimizer->state_reset = true;
  const RunAnalysis a = analyze_run(run);
  REQUIRE_FALSE(a.slow_stretches.empty());
  const std::vector<Signal>& s = a.slow_stretches.front().signals;
  REQUIRE(s.size() >= 2);
  CHECK(s[0].kind == "optimizer_reset");
  CHECK(s[1].kind == "jit_plan_builds");
  CHECK(s[0].score == s[1].score);
}

TEST_CASE("a switch with no probe signal whose slow steps the noise explains is not charged") {
  // Phase 2 on a machine that jumps to a 2x level for 4 steps every 20: at the start of the
  // phase, and five times later in its steady state.
  std::vector<double> phase2;
  for (int i = 0; i < 120; ++i) {
    const bool slow = i % 20 < 4;
    phase2.push_back((slow ? 20.0 : 10.0) * (1.0 + 0.01 * (i % 3)));
  }
  const RunAnalysis a = analyze_run(make_run({steady(60, 10), phase2}));
  REQUIRE(a.switches.size() == 1);
  const SwitchCost& s = a.switches[0];
  CHECK_FALSE(s.signal);
  if (s.extra_s > 0.0) {
    CHECK(s.noise_explained);
    CHECK(s.tax_s == 0.0);
    CHECK(s.recovery_steps == 0);
    CHECK(s.noise_high_s >= s.extra_s);
  }
  // The same slow start with a compile at the switch is the switch's cost.
  RunFile compiled = make_run({steady(60, 10), phase2});
  compiled.steps[60].jit->compiles = 1;
  const RunAnalysis b = analyze_run(compiled);
  CHECK(b.switches[0].signal);
  CHECK_FALSE(b.switches[0].noise_explained);
  CHECK(b.switches[0].tax_s == doctest::Approx(b.switches[0].extra_s));
  // Every cache miss kProbeCounts lists is a signal: the dispatcher's first-seen op signatures
  // too, which the hand-written list before 0.7 left out.
  RunFile missed = make_run({steady(60, 10), phase2});
  missed.steps[60].dispatch = DispatchStats{};
  missed.steps[60].dispatch->sampled = true;
  missed.steps[60].dispatch->new_signatures = 12;
  CHECK(analyze_run(missed).switches[0].signal);
  // A slow start the steady state never matches stands out: charged even without a signal.
  std::vector<double> calm(120, 10.0);
  for (int i = 0; i < 4; ++i) calm[static_cast<size_t>(i)] = 40.0;
  const RunAnalysis c = analyze_run(make_run({steady(60, 10), calm}));
  CHECK_FALSE(c.switches[0].noise_explained);
  CHECK(c.switches[0].tax_s > 0.1);
}
