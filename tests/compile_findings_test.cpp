// torch.compile's findings in one run (frames, guards, the eager cliff, graph breaks, caches) and
// the compile diff of two runs, from synthetic events of the shapes the Python package writes.
#include "recompdiag/core/compile_findings.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/step_columns.h"

using namespace recompdiag;
using nlohmann::json;

namespace {

// A run of `n` steps of 10 ms, each with a compiled section (observed), a loss, no events.
RunFile compiled_run(int64_t n) {
  RunFile run;
  run.path = "compiled.jsonl";
  run.header.mode = "python";
  for (int64_t i = 0; i < n; ++i) {
    StepRecord s;
    s.step = i;
    s.step_in_phase = i;
    s.wall_ms = 10.0;
    s.loss = 1.0;
    s.compiled = CompiledStats{};
    s.compiled->lookups = 2;
    s.compiled->region_runs = 2;
    s.compiled->ledger = true;
    run.steps.push_back(s);
  }
  return run;
}

// Step `step` compiled for `ms` (its wall time grows by as much).
void compiles_at(RunFile& run, int64_t step, double ms) {
  StepRecord& s = run.steps[static_cast<size_t>(step)];
  s.wall_ms += ms;
  s.compiled->compile_ms = ms;
  s.compiled->compiles = 1;
  s.compiled->recompiles = step > 0 ? 1 : 0;
}

// A recompile event as python/recompdiag/dynamo_hooks.py writes it.
void recompile(RunFile& run, int64_t step, const std::string& function, int64_t line,
               const std::string& guard, const std::string& cause, int64_t frame_compiles) {
  json detail = {{"compiler", "dynamo"},
                 {"function", function},
                 {"file", "/venv/lib/python3.11/site-packages/pkg/model.py"},
                 {"line", line},
                 {"guard_failures", {guard, "0/0: older"}},
                 {"frame_compiles", frame_compiles},
                 {"recompile_limit", 8}};
  if (!cause.empty()) detail["cause"] = cause;
  run.events.push_back(
      {EventKind::kCompile, step, 1, "torch.compile recompiles " + function, detail});
}

const FrameFinding* frame(const CompileFindings& f, const std::string& function) {
  for (const FrameFinding& x : f.frames) {
    if (x.function == function) return &x;
  }
  return nullptr;
}

CompileFindings findings_of(const RunFile& run) { return analyze_run(run).compile; }

}  // namespace

TEST_CASE("guard_subject: the guard without its compile id, comments and changing values") {
  CHECK(guard_subject("0/3: tensor 'x' size mismatch at index 1. expected 51, actual 45") ==
        "tensor 'x' size mismatch at index 1");
  CHECK(guard_subject("2/0: L['scale'] == 0.5  # loss = scale * mse  # train.py:18 in step") ==
        "L['scale']");
  CHECK(guard_subject("GLOBAL_STATE changed: grad_mode ") == "GLOBAL_STATE changed: grad_mode");
  // A colon late in the text is no compile id.
  CHECK(guard_subject("a very long guard text: L['x'] == 3") == "a very long guard text: L['x']");
}

TEST_CASE(
    "compile findings: frames by recompiles, guards grouped by subject, compile time shared") {
  RunFile run = compiled_run(40);
  compiles_at(run, 0, 500.0);
  compiles_at(run, 3, 200.0);
  compiles_at(run, 5, 100.0);
  compiles_at(run, 30, 300.0);
  // `forward` recompiles on a new size twice (different values, one subject); `step` on a float.
  recompile(run, 3, "forward", 12, "0/0: tensor 'x' size mismatch at index 1. expected 8, actual 9",
            "new_size", 2);
  recompile(run, 3, "step", 40, "1/0: L['scale'] == 0.5  # loss = scale * l  # train.py:18 in step",
            "", 2);
  recompile(run, 5, "forward", 12, "0/1: tensor 'x' size mismatch at index 1. expected 9, actual 7",
            "new_size", 3);
  recompile(run, 30, "forward", 12, "0/2: L['flag'] == True", "", 4);

  const CompileFindings f = findings_of(run);
  CHECK(f.observed);
  CHECK(f.ledger);
  CHECK(f.compiles == 4);
  CHECK(f.recompiles == 3);
  CHECK(f.compile_s == doctest::Approx(1.1));
  REQUIRE(f.frames.size() == 2);
  const FrameFinding* fw = frame(f, "forward");
  REQUIRE(fw != nullptr);
  CHECK(fw->recompiles == 3);
  CHECK(fw->first_step == 3);
  CHECK(fw->last_step == 30);
  CHECK(fw->compiles == 4);
  CHECK(fw->recompile_limit == 8);
  CHECK_FALSE(fw->limit_reached);
  // Step 3's 200 ms split between the two frames recompiled in it, steps 5 and 30 whole.
  CHECK(fw->compile_s == doctest::Approx(0.1 + 0.1 + 0.3));
  REQUIRE(fw->guards.size() == 2);
  CHECK(fw->guards[0].subject == "tensor 'x' size mismatch at index 1");
  CHECK(fw->guards[0].recompiles == 2);
  CHECK(fw->guards[0].newest == "tensor 'x' size mismatch at index 1. expected 9, actual 7");
  CHECK(fw->guards[0].cause == "new_size");
  CHECK(fw->guards[1].subject == "L['flag']");
  // The costliest frame first.
  CHECK(f.frames.front().function == "forward");
  const FrameFinding* st = frame(f, "step");
  REQUIRE(st != nullptr);
  REQUIRE(st->guards.size() == 1);
  // No cause in the event: classified from the guard, with the quoted source and its site.
  CHECK(st->guards[0].cause == "python_number");
  CHECK(st->guards[0].source == "loss = scale * l");
  CHECK(st->guards[0].site == "train.py:18 in step");
  CHECK(st->compile_s == doctest::Approx(0.1));
}

TEST_CASE("compile findings: the recompile limit's note starts the eager cliff") {
  RunFile run = compiled_run(30);
  // An eager call during the first compiles is no cliff.
  run.steps[1].compiled->eager_fallbacks = 1;
  for (int64_t s = 12; s < 30; s += 2)
    run.steps[static_cast<size_t>(s)].compiled->eager_fallbacks = 2;
  run.steps[20].compiled->sampled = false;  // an unobserved step counts nothing
  for (int k = 0; k < 8; ++k) {
    recompile(run, 2 + k, "wrapper", 1075,
              "0/0: tensor 'x' size mismatch at index 1. expected 1, actual 2", "new_size", 2 + k);
  }
  run.events.push_back({EventKind::kNote,
                        11,
                        1,
                        "torch.compile gave up",
                        {{"compiler", "dynamo"},
                         {"message",
                          "torch._dynamo hit config.recompile_limit (8)\n   function: 'wrapper' "
                          "(/venv/site-packages/pkg/model.py:1075)\n   last reason: 0/7: ..."}}});
  const CompileFindings f = findings_of(run);
  REQUIRE(f.eager.has_value());
  CHECK(f.eager->first_step == 11);
  CHECK(f.eager->limit == 8);
  CHECK(f.eager->limit_step == 11);
  CHECK(f.eager->function == "wrapper");
  CHECK(f.eager->line == 1075);
  CHECK(f.eager->file == "/venv/site-packages/pkg/model.py");
  // Steps 11-29 observed but step 20: 18; eager on 12, 14, 16, 18, 22, 24, 26, 28.
  CHECK(f.eager->observed_steps == 18);
  CHECK(f.eager->steps == 8);
  CHECK(f.eager->calls == 16);
  REQUIRE(f.frames.size() == 1);
  CHECK(f.frames[0].limit_reached);
  CHECK(f.frames[0].compiles == 9);
}

TEST_CASE("compile findings: without a note, eager calls count from the first after warm-up") {
  RunFile run = compiled_run(60);
  run.steps[0].compiled->eager_fallbacks = 3;  // during warm-up (the first compile is slow)
  compiles_at(run, 0, 900.0);
  run.steps[45].compiled->eager_fallbacks = 1;
  const CompileFindings f = findings_of(run);
  REQUIRE(f.eager.has_value());
  CHECK(f.eager->first_step == 45);
  CHECK(f.eager->steps == 1);
  CHECK(f.eager->limit_step == -1);
  CHECK_FALSE(findings_of(compiled_run(40)).eager.has_value());
}

TEST_CASE(
    "compile findings: graph breaks by reason with hints and sites; caches; other compilers") {
  RunFile run = compiled_run(10);
  run.steps[0].compiled->fx_cache_misses = 3;
  run.steps[4].compiled->fx_cache_hits = 2;
  run.steps[0].compiled->aot_cache_hits = 1;
  const auto brk = [&](int64_t step, const std::string& reason, int64_t count, json sites) {
    run.events.push_back({EventKind::kGraphBreak,
                          step,
                          1,
                          "graph break",
                          {{"compiler", "dynamo"},
                           {"reason", reason},
                           {"count", count},
                           {"hints", {"do this", "or that"}},
                           {"sites", sites}}});
  };
  brk(0, "print() not supported", 2, {"train.py:7 in step"});
  brk(3, "print() not supported", 1, {"train.py:7 in step", "train.py:9 in step"});
  brk(4, "item() graph break", 5, json::array());
  run.events.push_back({EventKind::kCompile, 0, 1, "initial", {{"compile_ms", 3.0}}});
  run.events.push_back({EventKind::kCompile, 6, 1, "phase 2", {{"compile_ms", 3.0}}});
  run.events.push_back({EventKind::kCompile, 8, 1, "phase 2", {{"compile_ms", 3.0}}});
  const CompileFindings f = findings_of(run);
  REQUIRE(f.graph_breaks.size() == 2);
  CHECK(f.graph_breaks[0].reason == "item() graph break");  // most breaks first
  CHECK(f.graph_breaks[0].count == 5);
  CHECK(f.graph_breaks[1].count == 3);
  CHECK(f.graph_breaks[1].hint == "do this");
  CHECK(f.graph_breaks[1].first_step == 0);
  CHECK(f.graph_breaks[1].sites ==
        std::vector<std::string>{"train.py:7 in step", "train.py:9 in step"});
  CHECK(f.fx_cache.outcome == CacheOutcome::kMixed);
  CHECK(f.fx_cache.misses == 3);
  CHECK(f.aot_cache.outcome == CacheOutcome::kWarm);
  CHECK(f.frames.empty());
  REQUIRE(f.other_compiles.size() == 2);
  CHECK(f.other_compiles[0].reason == "phase 2");
  CHECK(f.other_compiles[0].count == 2);
  CHECK(f.other_compiles[0].first_step == 6);
  CHECK(f.other_compiles[0].last_step == 8);
}

TEST_CASE("compile findings: a run without a compiled section observed nothing") {
  RunFile run = compiled_run(5);
  for (StepRecord& s : run.steps) s.compiled.reset();
  const CompileFindings f = findings_of(run);
  CHECK_FALSE(f.observed);
  CHECK(f.compiles == 0);
  CHECK(f.fx_cache.outcome == CacheOutcome::kUnused);
}

TEST_CASE("compile diff: frames, guards and cliffs on one side only") {
  RunFile a = compiled_run(30);
  RunFile b = compiled_run(30);
  recompile(a, 3, "shared", 5, "0/0: L['w'] == 0.7", "python_number", 2);
  recompile(b, 3, "shared", 5, "0/0: L['w'] == 0.9", "python_number", 2);
  recompile(b, 4, "shared", 5, "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 3",
            "new_size", 3);
  recompile(b, 6, "only_b", 50, "1/0: tensor 'y' size mismatch at index 1. expected 4, actual 3",
            "new_size", 2);
  b.steps[20].compiled->eager_fallbacks = 1;
  b.steps[0].compiled->fx_cache_misses = 2;
  a.steps[0].compiled->fx_cache_hits = 2;
  const CompileDiff d = diff_compile_findings(findings_of(a), findings_of(b));
  REQUIRE(d.frames.size() == 2);
  const FrameDiff* shared = nullptr;
  const FrameDiff* only = nullptr;
  for (const FrameDiff& f : d.frames) (f.function == "shared" ? shared : only) = &f;
  REQUIRE(shared != nullptr);
  REQUIRE(only != nullptr);
  CHECK(shared->recompiles_a == 1);
  CHECK(shared->recompiles_b == 2);
  CHECK(shared->only_a.empty());
  REQUIRE(shared->only_b.size() == 1);
  CHECK(shared->only_b[0].subject == "tensor 'x' size mismatch at index 0");
  CHECK(only->recompiles_a == 0);
  CHECK(only->recompiles_b == 1);
  REQUIRE(d.fx_cache.has_value());
  CHECK(d.fx_cache->first == CacheOutcome::kWarm);
  CHECK(d.fx_cache->second == CacheOutcome::kCold);
  CHECK_FALSE(d.eager_a.has_value());
  REQUIRE(d.eager_b.has_value());
  CHECK(d.eager_b->first_step == 20);
  CHECK_FALSE(d.empty());
  // A run against itself differs in nothing.
  CHECK(diff_compile_findings(findings_of(b), findings_of(b)).empty());
}

TEST_CASE("a comparison carries the compile diff, and no training quality without losses") {
  RunFile a = compiled_run(60);
  RunFile b = compiled_run(60);
  recompile(b, 30, "forward", 12, "0/0: L['w'] == 0.7", "python_number", 2);
  for (StepRecord& s : b.steps) s.loss = 0.0;
  const Comparison c = compare_runs(a, b);
  REQUIRE(c.compile_diff.frames.size() == 1);
  CHECK(c.compile_diff.frames[0].recompiles_b == 1);
  CHECK(c.a.outcome.loss_recorded);
  CHECK_FALSE(c.b.outcome.loss_recorded);
  CHECK(c.convergence.pairs == 0);
}
