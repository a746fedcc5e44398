#include "recompdiag/core/health.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace recompdiag;

namespace {

StepRecord step_at(int64_t step, double wall_ms = 10.0) {
  StepRecord rec;
  rec.step = step;
  rec.wall_ms = wall_ms;
  return rec;
}

bool has_rule(const std::vector<Alert>& alerts, const std::string& rule) {
  for (const auto& a : alerts) {
    if (a.rule == rule) return true;
  }
  return false;
}

HealthOptions quick_options() {
  HealthOptions o;
  o.warmup_steps = 3;
  o.min_window = 3;
  o.rolling_window = 5;
  o.repeat_after_steps = 0;
  return o;
}

}  // namespace

TEST_CASE(
    "health: compiles during warm-up are quiet, after warm-up alert with "
    "the reason") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(0);
  rec.jit = JitStats{1, 1, 1};
  CHECK(health.evaluate(rec).empty());

  EventRecord compile;
  compile.kind = EventKind::kCompile;
  compile.step = 7;
  compile.reason = "phase 2: recompile with new loss weights";
  health.note_event(compile);
  rec = step_at(7);
  rec.jit = JitStats{1, 2, 1};
  auto alerts = health.evaluate(rec);
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].rule == rules::kCompileAfterWarmup);
  CHECK(alerts[0].step == 7);
  CHECK(alerts[0].evidence.find("phase 2: recompile") != std::string::npos);
  CHECK(alerts[0].evidence.find("2 optimized-plan build") != std::string::npos);
  CHECK_FALSE(alerts[0].advice.empty());

  rec = step_at(8);
  rec.jit = JitStats{};
  CHECK_FALSE(has_rule(health.evaluate(rec), rules::kCompileAfterWarmup));
}

TEST_CASE("health: new signatures after warm-up are cache misses") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(1);
  rec.dispatch = DispatchStats{};
  rec.dispatch->new_signatures = 40;
  CHECK(health.evaluate(rec).empty());
  rec = step_at(5);
  rec.dispatch = DispatchStats{};
  rec.dispatch->new_signatures = 2;
  CHECK(has_rule(health.evaluate(rec), rules::kCacheMissAfterWarmup));
  rec = step_at(6);
  rec.cupti = CuptiStats{};
  rec.cupti->module_loads = 1;
  CHECK(has_rule(health.evaluate(rec), rules::kCacheMissAfterWarmup));
}

TEST_CASE("health: host ops and copies alert only when the expected device is CUDA; syncs on any") {
  StepRecord rec = step_at(10);
  rec.dispatch = DispatchStats{};
  rec.dispatch->ops = 100;
  rec.dispatch->host_ops = 5;
  rec.dispatch->copies_d2h = 1;
  rec.dispatch->syncs = 2;
  rec.dispatch->recorder_syncs = 1;

  HealthMonitor on_cpu(quick_options(), "cpu");
  auto cpu_alerts = on_cpu.evaluate(rec);
  REQUIRE(cpu_alerts.size() == 1);
  CHECK(cpu_alerts[0].rule == rules::kHostSyncs);
  CHECK(cpu_alerts[0].evidence.find("2 host sync(s)") != std::string::npos);

  HealthMonitor on_cuda(quick_options(), "cuda:0");
  auto alerts = on_cuda.evaluate(rec);
  CHECK(has_rule(alerts, rules::kHostOps));
  CHECK(has_rule(alerts, rules::kCrossDeviceCopies));
  CHECK(has_rule(alerts, rules::kHostSyncs));

  // The recorder's own reads and the default h2d allowance do not alert.
  rec.step = 11;
  rec.dispatch = DispatchStats{};
  rec.dispatch->recorder_syncs = 3;
  rec.dispatch->copies_h2d = 2;
  CHECK(on_cuda.evaluate(rec).empty());

  // An unsampled step has no counters to judge.
  rec.step = 12;
  rec.dispatch = DispatchStats{};
  rec.dispatch->sampled = false;
  rec.dispatch->syncs = 9;
  CHECK(on_cuda.evaluate(rec).empty());
}

TEST_CASE("health: optimizer findings") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(0);
  rec.optimizer = OptimizerStats{};
  rec.optimizer->state_off_device = 2;
  rec.optimizer->state_missing = 1;
  rec.optimizer->state_reset = true;
  rec.optimizer->lr_requested = 1e-3;
  rec.optimizer->lr_effective = 1e-2;
  auto alerts = health.evaluate(rec);
  CHECK(has_rule(alerts, rules::kOptimizerStateOffDevice));
  CHECK(has_rule(alerts, rules::kOptimizerStateMissing));
  CHECK(has_rule(alerts, rules::kOptimizerStateReset));
  CHECK(has_rule(alerts, rules::kLrNotInEffect));

  rec = step_at(1);
  rec.optimizer = OptimizerStats{};
  rec.optimizer->state_dtype_mismatch = 1;
  rec.optimizer->lr_requested = 1e-3;
  rec.optimizer->lr_effective = 1e-3;
  alerts = health.evaluate(rec);
  CHECK(has_rule(alerts, rules::kOptimizerStateOffDevice));
  CHECK_FALSE(has_rule(alerts, rules::kLrNotInEffect));

  // lr_requested == 0 means "not told": no lr check.
  rec = step_at(2);
  rec.optimizer = OptimizerStats{};
  rec.optimizer->lr_effective = 5.0;
  CHECK(health.evaluate(rec).empty());
}

TEST_CASE("health: placement and drops") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(0);
  rec.placement = PlacementStats{0, 1, 0};
  rec.dispatch = DispatchStats{};
  rec.dispatch->dropped = 3;
  auto alerts = health.evaluate(rec);
  CHECK(has_rule(alerts, rules::kPlacement));
  CHECK(has_rule(alerts, rules::kProbeDrops));
}

TEST_CASE("health: slow steps alert when several in a row are beyond the median and the spread") {
  HealthMonitor health(quick_options());
  const double times[] = {50, 10, 11, 9, 10, 10};  // step 0 is warm-up and slow: no alert
  int64_t s = 0;
  for (double t : times) CHECK(health.evaluate(step_at(s++, t)).empty());
  // Window holds the last 5: 10 11 9 10 10 -> median 10, MAD 0 (threshold 1.5x).
  CHECK(health.rolling_median() == doctest::Approx(10.0));
  CHECK(health.window_size() == 5);
  CHECK(health.evaluate(step_at(s++, 16.0)).empty());  // slow, first of a streak
  // The slow steps enter the window and widen its spread: the next ones must pass it too.
  CHECK(health.evaluate(step_at(s++, 30.0)).empty());  // second
  auto alerts = health.evaluate(step_at(s++, 30.0));   // third in a row: a slowdown, not a spike
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].rule == rules::kSlowStep);
  CHECK(alerts[0].evidence.find("steps 6-8") != std::string::npos);
  // Bounded: the window never grows past its capacity.
  for (int i = 0; i < 100; ++i) health.evaluate(step_at(s++, 10.0));
  CHECK(health.window_size() == 5);
}

TEST_CASE(
    "health: a lone spike, a spike within the spread, or a slow step with a signal is quiet") {
  HealthOptions o = quick_options();
  o.rolling_window = 9;
  HealthMonitor health(o);
  // A noisy window: median 10, MAD 3 -> robust sigma 4.4, threshold 10 + 6 x 4.4 = 36.7 ms.
  const double times[] = {10, 7, 13, 10, 7, 13, 10, 7, 13};
  int64_t s = 0;
  for (double t : times) CHECK(health.evaluate(step_at(s++, t)).empty());
  // 2.5x the median, within the spread, three in a row: noise on this machine.
  for (int i = 0; i < 3; ++i) CHECK(health.evaluate(step_at(s++, 25.0)).empty());
  for (int i = 0; i < 9; ++i) health.evaluate(step_at(s++, times[i]));
  // Beyond the spread, but each streak is broken: two spikes, a normal step, two spikes.
  CHECK(health.evaluate(step_at(s++, 60.0)).empty());
  CHECK(health.evaluate(step_at(s++, 60.0)).empty());
  CHECK(health.evaluate(step_at(s++, 10.0)).empty());
  CHECK(health.evaluate(step_at(s++, 60.0)).empty());
  // A slow step with a plan build is the compile rule's finding, and it breaks the streak.
  StepRecord planned = step_at(s++, 60.0);
  planned.jit = JitStats{0, 1, 0};
  auto alerts = health.evaluate(planned);
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].rule == rules::kCompileAfterWarmup);
  CHECK(health.evaluate(step_at(s++, 60.0)).empty());
}

TEST_CASE("health: profiling that never ends is jit_not_optimized") {
  HealthOptions o = quick_options();
  o.max_profiling_steps = 4;
  HealthMonitor health(o);
  auto profiling = [](int64_t s, int64_t runs) {
    StepRecord rec = step_at(s);
    rec.jit = JitStats{0, 0, runs};
    return rec;
  };
  // A healthy executor: one profiling run after the compile, then its plan.
  int64_t s = 10;
  CHECK(health.evaluate(profiling(s++, 1)).empty());
  for (int i = 0; i < 6; ++i) CHECK(health.evaluate(profiling(s++, 0)).empty());
  for (int i = 0; i < 3; ++i) CHECK(health.evaluate(profiling(s++, 1)).empty());
  auto alerts = health.evaluate(profiling(s++, 1));  // the fourth in a row
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].rule == rules::kJitNotOptimized);
  CHECK(alerts[0].evidence.find("4 steps in a row") != std::string::npos);
}

TEST_CASE("health: every new compile after warm-up alerts, despite repeat_after_steps") {
  HealthOptions o = quick_options();
  o.repeat_after_steps = 50;
  HealthMonitor health(o);
  auto compiled_at = [&](int64_t s) {
    EventRecord compile;
    compile.kind = EventKind::kCompile;
    compile.step = s;
    compile.reason = "epoch " + std::to_string(s / 10);
    health.note_event(compile);
    StepRecord rec = step_at(s);
    rec.jit = JitStats{1, 0, 1};
    return rec;
  };
  CHECK(health.evaluate(compiled_at(10)).size() == 1);
  StepRecord plan = step_at(11);
  plan.jit = JitStats{0, 1, 0};
  CHECK(health.evaluate(plan).empty());  // the same compile's plan build: suppressed
  auto alerts = health.evaluate(compiled_at(20));
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].evidence.find("reason: epoch 2") != std::string::npos);
}

TEST_CASE("health: an alert is not repeated within repeat_after_steps") {
  HealthOptions o = quick_options();
  o.repeat_after_steps = 10;
  HealthMonitor health(o);
  auto reset_at = [](int64_t s) {
    StepRecord rec = step_at(s);
    rec.optimizer = OptimizerStats{};
    rec.optimizer->state_reset = true;
    return rec;
  };
  CHECK(health.evaluate(reset_at(20)).size() == 1);
  CHECK(health.evaluate(reset_at(25)).empty());
  CHECK(health.suppressed() == 1);
  CHECK(health.evaluate(reset_at(30)).size() == 1);
}

TEST_CASE("health: an alert becomes an event") {
  Alert alert{rules::kHostSyncs, 12, 2, "3 host syncs", "read less often"};
  EventRecord event = to_event(alert);
  CHECK(event.kind == EventKind::kAlert);
  CHECK(event.step == 12);
  CHECK(event.phase == 2);
  CHECK(event.reason == "host_syncs: 3 host syncs");
  CHECK(event.detail["advice"] == "read less often");
}

TEST_CASE("health: torch.compile compiles after warm-up alert with the guard failure") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(0);
  rec.compiled = CompiledStats{0, 3, 3, 0, 0, 900.0};
  CHECK(health.evaluate(rec).empty());  // warm-up compiles
  EventRecord guard;
  guard.kind = EventKind::kCompile;
  guard.step = 6;
  guard.reason = "torch.compile recompiles step: guard failed: lr == 0.01";
  health.note_event(guard);
  rec = step_at(6);
  rec.compiled = CompiledStats{3, 3, 1, 1, 0, 75.0};
  rec.dispatch = DispatchStats{};
  rec.dispatch->syncs = 19;  // the compile's own host reads
  auto alerts = health.evaluate(rec);
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].rule == rules::kCompileAfterWarmup);
  CHECK(alerts[0].evidence.find("1 torch.compile compile(s) (1 recompile(s)") != std::string::npos);
  CHECK(alerts[0].evidence.find("guard failed: lr == 0.01") != std::string::npos);
  // The same syncs on a step that compiled nothing are the step's own.
  rec = step_at(7);
  rec.compiled = CompiledStats{3, 3, 0, 0, 0, 0.0};
  rec.dispatch = DispatchStats{};
  rec.dispatch->syncs = 19;
  CHECK(has_rule(health.evaluate(rec), rules::kHostSyncs));
}

TEST_CASE("health: compiled frames that start running eagerly alert once, at the cliff") {
  HealthMonitor health(quick_options());
  StepRecord rec = step_at(0);
  rec.compiled = CompiledStats{1, 0, 0, 0, 1, 0.0};  // eager before anything compiled: no cliff
  CHECK_FALSE(has_rule(health.evaluate(rec), rules::kCompiledFallback));
  for (int64_t s = 1; s < 5; ++s) {
    rec = step_at(s);
    rec.compiled = CompiledStats{3, 3, s == 1 ? 3 : 0, 0, 0, 0.0};
    CHECK(health.evaluate(rec).empty());
  }
  rec = step_at(5);
  rec.compiled = CompiledStats{3, 2, 0, 0, 1, 0.0};
  auto alerts = health.evaluate(rec);
  REQUIRE(has_rule(alerts, rules::kCompiledFallback));
  CHECK(alerts[0].evidence.find("1 call(s) of compiled frames ran eagerly at step 5") !=
        std::string::npos);
  for (int64_t s = 6; s < 9; ++s) {  // still eager: the same finding, not a new one
    rec = step_at(s);
    rec.compiled = CompiledStats{3, 2, 0, 0, 1, 0.0};
    CHECK_FALSE(has_rule(health.evaluate(rec), rules::kCompiledFallback));
  }
  rec = step_at(9);  // a second frame falls off the cliff
  rec.compiled = CompiledStats{3, 1, 0, 0, 2, 0.0};
  CHECK(has_rule(health.evaluate(rec), rules::kCompiledFallback));
}

TEST_CASE("health: a frame past half its recompile limit is a recompile_budget alert, each time") {
  HealthMonitor health(quick_options());
  EventRecord compile;
  compile.kind = EventKind::kCompile;
  compile.step = 1;
  compile.reason = "torch.compile recompiles step (job.py:3): guard failed: L['lr'] == 0.01";
  health.note_event(compile);
  const auto at = [&](int64_t n, int64_t frame_compiles, int64_t compile_ids, bool ledger) {
    StepRecord rec = step_at(n);
    rec.compiled = CompiledStats{};
    rec.compiled->ledger = ledger;
    rec.compiled->compile_ids = compile_ids;
    rec.compiled->frame_compiles_max = frame_compiles;
    rec.compiled->recompile_limit = 8;
    return health.evaluate(rec);
  };
  CHECK_FALSE(has_rule(at(1, 3, 1, true), rules::kRecompileBudget));  // 3 of 8: not yet
  const std::vector<Alert> half = at(2, 4, 1, true);  // in warm-up too: the budget goes early
  REQUIRE(has_rule(half, rules::kRecompileBudget));
  for (const Alert& a : half) {
    if (a.rule != rules::kRecompileBudget) continue;
    CHECK(a.evidence.find("4 of the 8 compiles") != std::string::npos);
    CHECK(a.evidence.find("L['lr'] == 0.01") != std::string::npos);
  }
  CHECK_FALSE(has_rule(at(3, 4, 0, true), rules::kRecompileBudget));  // no compile at the step
  CHECK(has_rule(at(4, 5, 1, true), rules::kRecompileBudget));        // the next recompile
  CHECK_FALSE(has_rule(at(5, 6, 1, false), rules::kRecompileBudget)); // no ledger: not measured
}
