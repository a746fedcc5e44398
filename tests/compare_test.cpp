#include "recompdiag/core/compare.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "compare_fixtures.h"
#include "input_error.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

using test::input_error;

std::string fixture(const std::string& name) {
  return std::string(RECOMPDIAG_FIXTURES_DIR) + "/" + name;
}

// The synthetic fixtures draw every step from the same distribution: there is no spread between
// runs, only within them, so the tests that judge them as one run per side assume none.
CompareOptions no_run_spread() {
  CompareOptions o;
  o.run_noise = 0.0;
  return o;
}

Comparison compare_fixtures(const std::string& a, const std::string& b) {
  return compare_runs(read_run_file(fixture(a)), read_run_file(fixture(b)), no_run_spread());
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the checked-in fixtures are what the generator writes") {
  test::TempDir dir;
  for (const auto& entry : test::compare_fixtures()) {
    // Named, not a structured binding: CHECK_MESSAGE's lambda cannot capture one in C++17.
    const std::string& name = entry.first;
    write_synthetic_run(dir.file(name), entry.second);
    const bool same = test::read_text(dir.file(name)) == test::read_text(fixture(name));
    CHECK_MESSAGE(same, name << " differs: rerun make_compare_fixtures tests/fixtures");
  }
}

TEST_CASE("a rerun of the same job is no change") {
  Comparison c = compare_fixtures("compare_baseline.jsonl", "compare_rerun.jsonl");
  CHECK(c.verdict == Verdict::kNoChange);
  CHECK(exit_code_for(c.verdict) == 0);
  REQUIRE(c.phases.size() == 2);
  for (const auto& p : c.phases) {
    CHECK(p.verdict == Verdict::kNoChange);
    CHECK(p.ratio.low < 1.05);
    CHECK(p.ratio.high > 0.95);
  }
  // The seeds differ, and the report says so.
  REQUIRE(c.config_differences.size() == 1);
  CHECK(c.config_differences[0].key == "seed");
  CHECK(c.config_differences[0].a == "1");
  CHECK(c.config_differences[0].b == "2");
  bool warned = false;
  for (const auto& w : reports::warnings(c))
    warned |= contains(w, "configurations differ: seed: 1 vs 2");
  CHECK(warned);
}

TEST_CASE("one independent run per side gives no time verdict until the spread is measured") {
  // Nothing is assumed: without a measured run-to-run spread even a 30% slowdown is not proven.
  const RunFile base = read_run_file(fixture("compare_baseline.jsonl"));
  Comparison none = compare_runs(base, read_run_file(fixture("compare_slower.jsonl")));
  CHECK(none.verdict == Verdict::kInconclusive);
  for (const auto& p : none.phases) {
    CHECK(contains(reports::phase_reason(p, none), "no measured run-to-run spread"));
    CHECK(contains(reports::phase_reason(p, none), "bench noise"));
  }
  // With a 3% spread known (e.g. from a noise profile), a rerun cannot be proven within 5%...
  CompareOptions measured;
  measured.run_noise = 0.03;
  measured.run_noise_source = "noise profile n.json: 12 runs on host1";
  Comparison c = compare_runs(base, read_run_file(fixture("compare_rerun.jsonl")), measured);
  CHECK(c.verdict == Verdict::kInconclusive);
  CHECK(exit_code_for(c, false) == 0);
  for (const auto& p : c.phases) {
    CHECK(p.verdict == Verdict::kInconclusive);
    CHECK(p.runs_needed >= 2);
    CHECK(p.test.mde > 0.05);
    CHECK(
        contains(reports::phase_reason(p, c), "3.0% run-to-run spread from noise profile n.json"));
  }
  // ...and the 30% slowdown shows.
  CHECK(compare_runs(base, read_run_file(fixture("compare_slower.jsonl")), measured).verdict ==
        Verdict::kRegression);
}

TEST_CASE("an identical copy is no change with a ratio of exactly 1") {
  test::TempDir dir;
  std::filesystem::copy_file(fixture("compare_baseline.jsonl"), dir.file("copy.jsonl"));
  Comparison c = compare_runs(read_run_file(fixture("compare_baseline.jsonl")),
                              read_run_file(dir.file("copy.jsonl")), no_run_spread());
  CHECK(c.verdict == Verdict::kNoChange);
  REQUIRE(c.phases.size() == 2);
  for (const auto& p : c.phases) {
    CHECK(p.ratio.ratio == 1.0);
    CHECK(p.mann_whitney.p == doctest::Approx(1.0));
  }
  CHECK(c.config_differences.empty());
}

TEST_CASE("phase 2 slowed by 30% is a regression") {
  Comparison c = compare_fixtures("compare_baseline.jsonl", "compare_slower.jsonl");
  CHECK(c.verdict == Verdict::kRegression);
  CHECK(exit_code_for(c.verdict) == 1);
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[0].verdict == Verdict::kNoChange);
  const PhaseComparison& p2 = c.phases[1];
  CHECK(p2.verdict == Verdict::kRegression);
  CHECK(p2.ratio.ratio == doctest::Approx(1.3).epsilon(0.03));
  CHECK(p2.ratio.low <= 1.3);
  CHECK(p2.ratio.high >= 1.3);
  CHECK(p2.mann_whitney.p < 1e-6);
  CHECK(reports::summary(c).rfind("regression: phase 2", 0) == 0);
}

TEST_CASE("a faster run is an improvement, and reversed it is a regression") {
  Comparison c = compare_fixtures("compare_baseline.jsonl", "compare_faster.jsonl");
  CHECK(c.verdict == Verdict::kImprovement);
  CHECK(exit_code_for(c.verdict) == 0);
  REQUIRE(c.phases.size() == 2);
  for (const auto& p : c.phases) CHECK(p.ratio.ratio == doctest::Approx(0.75).epsilon(0.03));
  CHECK(compare_fixtures("compare_faster.jsonl", "compare_baseline.jsonl").verdict ==
        Verdict::kRegression);
}

TEST_CASE("the threshold and alpha decide what counts") {
  RunFile a = read_run_file(fixture("compare_baseline.jsonl"));
  RunFile b = read_run_file(fixture("compare_slower.jsonl"));
  CompareOptions wide = no_run_spread();
  wide.threshold = 0.5;  // 30% is noise now
  CHECK(compare_runs(a, b, wide).verdict == Verdict::kNoChange);
  CompareOptions strict = no_run_spread();
  strict.alpha = 1e-300;  // nothing is significant
  Comparison c = compare_runs(a, b, strict);
  // 30% slower but nothing can be significant, nor proven equivalent: inconclusive.
  CHECK(c.verdict == Verdict::kInconclusive);
  CHECK(contains(reports::phase_reason(c.phases[1], c), "cannot be told from the 5.0% threshold"));
  CHECK(exit_code_for(c, false) == 0);
  CHECK(exit_code_for(c, true) == 1);
}

TEST_CASE("the switch cost of each run is compared") {
  Comparison c = compare_fixtures("compare_baseline.jsonl", "compare_slower.jsonl");
  REQUIRE(c.switches.size() == 1);
  const SwitchComparison& s = c.switches[0];
  CHECK(s.to_phase == 2);
  CHECK(s.recovery_steps_a >= 2);
  CHECK(s.recovery_steps_a <= 4);
  CHECK(s.extra_s_a > 0.1);  // 19x + 9.5x + 4.75x of a 5 ms step
  CHECK(s.tax_s_difference == doctest::Approx(s.tax_s_b - s.tax_s_a));
  CHECK(s.compile_s_a == 0.0);  // the fixtures' compile events carry no compile_ms
  CHECK(s.tax_s_a == s.extra_s_a);
  // The slow stretch at the switch names the compiles and the reset.
  bool named = false;
  for (const auto& st : c.a.slow_stretches) {
    if (st.first_step == 100) {
      named = contains(reports::stretch_sentence(st),
                       "2 JIT compiles (reason: phase 2: loss weights baked") &&
              contains(reports::stretch_sentence(st), "Adam state reset");
    }
  }
  CHECK(named);
}

TEST_CASE("too few samples draw a warning") {
  SyntheticRunOptions o;
  o.phase_steps = {12, 12};
  test::TempDir dir;
  write_synthetic_run(dir.file("a.jsonl"), o);
  o.seed = 9;
  write_synthetic_run(dir.file("b.jsonl"), o);
  Comparison c =
      compare_runs(read_run_file(dir.file("a.jsonl")), read_run_file(dir.file("b.jsonl")));
  bool warned = false;
  for (const auto& w : reports::warnings(c)) {
    warned |= contains(w, "few steady steps (fewer than 20)") && contains(w, "phase 1 ") &&
              contains(w, "phase 2 ");  // one warning names both phases
  }
  CHECK(warned);
  CHECK(c.phases[0].mann_whitney.too_few_samples);
}

TEST_CASE("bad input: the same file twice") {
  RunFile a = read_run_file(fixture("compare_baseline.jsonl"));
  std::string msg = input_error([&] { compare_runs(a, a); });
  CHECK(contains(msg, "compare_baseline.jsonl: the same file as"));
}

TEST_CASE("bad input: a run with no steps in a phase") {
  test::TempDir dir;
  SyntheticRunOptions o;
  o.phase_steps = {50, 0};  // phase 2 starts but never steps
  write_synthetic_run(dir.file("short.jsonl"), o);
  RunFile a = read_run_file(fixture("compare_baseline.jsonl"));
  RunFile b = read_run_file(dir.file("short.jsonl"));
  std::string msg = input_error([&] { compare_runs(a, b); });
  CHECK(contains(msg, "short.jsonl: no steps in phase 2"));
  CHECK(contains(msg, "has 100"));
  o.phase_steps = {0};
  write_synthetic_run(dir.file("none.jsonl"), o);
  RunFile none = read_run_file(dir.file("none.jsonl"));
  CHECK(contains(input_error([&] { compare_runs(none, a); }), "none.jsonl: no step records"));
}

TEST_CASE("bad input files are refused with the file and line named") {
  test::TempDir dir;
  const std::string good = test::read_text(fixture("compare_baseline.jsonl"));
  const std::string header = good.substr(0, good.find('\n') + 1);

  CHECK(contains(input_error([&] { read_run_file(dir.file("missing.jsonl")); }),
                 "missing.jsonl: cannot open run file"));

  test::write_text(dir.file("empty.jsonl"), "");
  CHECK(contains(input_error([&] { read_run_file(dir.file("empty.jsonl")); }),
                 "empty.jsonl: empty file"));

  test::write_text(dir.file("table.csv"), "step,wall_ms\n0,1.5\n");
  CHECK(contains(input_error([&] { read_run_file(dir.file("table.csv")); }), "table.csv:1: "));

  std::string v2 = header;
  v2.replace(v2.find("\"schema\":1"), 10, "\"schema\":2");
  test::write_text(dir.file("v2.jsonl"), v2);
  CHECK(contains(input_error([&] { read_run_file(dir.file("v2.jsonl")); }),
                 "v2.jsonl:1: unknown schema version 2"));

  const std::string step =
      "{\"type\":\"step\",\"step\":0,\"phase\":1,\"wall_ms\":WALL,\"loss\":1,\"head_losses\":[1],"
      "\"loss_weights\":[1],\"lr\":0.1}\n";
  auto with_wall = [&](const std::string& wall) {
    std::string s = step;
    s.replace(s.find("WALL"), 4, wall);
    return header + s + s;
  };
  test::write_text(dir.file("nan.jsonl"), with_wall("null"));
  CHECK(contains(input_error([&] { read_run_file(dir.file("nan.jsonl")); }),
                 "nan.jsonl:2: step 0 has a NaN"));
  test::write_text(dir.file("neg.jsonl"), with_wall("-3.5"));
  CHECK(contains(input_error([&] { read_run_file(dir.file("neg.jsonl")); }),
                 "neg.jsonl:2: step 0 has a negative wall time"));
}

TEST_CASE("a truncated last line is accepted and reported as a warning") {
  test::TempDir dir;
  std::string text = test::read_text(fixture("compare_slower.jsonl"));
  // Drop the summary and cut the last step in half, as a killed run leaves it.
  text = text.substr(0, text.rfind("{\"type\":\"summary\""));
  text = text.substr(0, text.size() - 200);
  test::write_text(dir.file("cut.jsonl"), text);
  RunFile cut = read_run_file(dir.file("cut.jsonl"));
  CHECK(cut.steps.size() == 199);
  Comparison c =
      compare_runs(read_run_file(fixture("compare_baseline.jsonl")), cut, no_run_spread());
  CHECK(c.verdict == Verdict::kRegression);
  bool truncated = false;
  bool unfinished = false;
  for (const auto& w : reports::warnings(c)) {
    truncated |= contains(w, "cut.jsonl:") && contains(w, "truncated last line");
    unfinished |= contains(w, "cut.jsonl: no summary line");
  }
  CHECK(truncated);
  CHECK(unfinished);
}

TEST_CASE(
    "recompile vs mutable: the recompile run pays the larger tax, and the compiles are named") {
  test::TempDir dir;
  SyntheticRunOptions recompile;
  recompile.phase_steps = {150, 150};
  SyntheticRunOptions mutable_run = recompile;
  mutable_run.mode = "mutable";
  mutable_run.seed = 5;
  mutable_run.switch_compiles = 0;
  mutable_run.optimizer_reset_at_switch = false;
  mutable_run.warmup_at_switch = false;
  write_synthetic_run(dir.file("recompile.jsonl"), recompile);
  write_synthetic_run(dir.file("mutable.jsonl"), mutable_run);
  Comparison c = compare_runs(read_run_file(dir.file("recompile.jsonl")),
                              read_run_file(dir.file("mutable.jsonl")), no_run_spread());
  REQUIRE(c.switches.size() == 1);
  CHECK(c.switches[0].tax_s_a > 0.1);
  CHECK(c.switches[0].tax_s_b < 0.02);
  CHECK(c.switches[0].recovery_steps_b == 0);
  // Same steady speed: the difference is the switch, which B's 2 fewer compiles saved (its
  // counted cost), a phase-2 improvement whatever the steady median says.
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[0].verdict == Verdict::kNoChange);
  CHECK(c.phases[1].verdict == Verdict::kImprovement);
  CHECK(c.phases[1].counted_decides);
  REQUIRE(c.counted_costs.size() == 1);
  CHECK(c.counted_costs[0].difference_s < -0.1);
  CHECK(contains(reports::counted_cost_line(c.counted_costs[0], c), "2 fewer JIT compiles"));
  CHECK(c.verdict == Verdict::kImprovement);
  bool mode_listed = false;
  for (const auto& d : c.config_differences) mode_listed |= d.key == "mode";
  CHECK(mode_listed);
  bool named = false;
  for (const auto& s : c.a.slow_stretches) {
    named |= s.first_step == 150 && contains(reports::stretch_sentence(s), "2 JIT compiles");
  }
  CHECK(named);
  // The switch is always shown; in the mutable run it costs nothing and names no compile.
  bool b_switch_shown = false;
  for (const auto& s : c.b.slow_stretches) {
    if (s.first_step < 150) continue;
    CHECK(s.first_step == 150);
    CHECK(s.last_step == 150);
    CHECK_FALSE(contains(reports::stretch_sentence(s), "JIT compile"));
    b_switch_shown = true;
  }
  CHECK(b_switch_shown);
}

TEST_CASE("a steady state that drifts while the run goes draws a warning") {
  RunFile a = read_run_file(fixture("compare_baseline.jsonl"));
  RunFile b = read_run_file(fixture("compare_rerun.jsonl"));
  CHECK(reports::warnings(compare_runs(a, b)).size() == 1);  // only the seed difference
  // The machine gets busy halfway through B's phase 1.
  for (auto& s : b.steps) {
    if (s.phase == 1 && s.step >= 55) s.wall_ms *= 1.3;
  }
  Comparison c = compare_runs(a, b);
  bool warned = false;
  for (const auto& w : reports::warnings(c)) {
    warned |=
        contains(w, "steady step time drifted") && contains(w, "compare_rerun.jsonl phase 1 +3");
  }
  CHECK(warned);
  CHECK(c.b.phases[0].drift_ratio == doctest::Approx(1.3).epsilon(0.05));
  CHECK(c.a.phases[0].drift_ratio == doctest::Approx(1.0).epsilon(0.05));
}

TEST_CASE("compare: expected configuration differences are listed but not warned about") {
  test::TempDir dir;
  SyntheticRunOptions a;
  a.phase_steps = {60, 60};
  SyntheticRunOptions b = a;
  b.mode = "mutable";
  write_synthetic_run(dir.file("a.jsonl"), a);
  write_synthetic_run(dir.file("b.jsonl"), b);
  const RunFile ra = read_run_file(dir.file("a.jsonl"));
  const RunFile rb = read_run_file(dir.file("b.jsonl"));
  auto config_warning = [](const Comparison& c) {
    for (const auto& w : reports::warnings(c))
      if (contains(w, "configurations differ")) return w;
    return std::string();
  };
  Comparison plain = compare_runs(ra, rb);
  CHECK(contains(config_warning(plain), "mode: recompile vs mutable"));
  CompareOptions o;
  o.expected_differences = {"mode", "optimizer_handoff", "config.mode", "config.optimizer_handoff"};
  Comparison expected = compare_runs(ra, rb, o);
  CHECK_MESSAGE(config_warning(expected).empty(), config_warning(expected));
  bool listed = false;
  for (const auto& d : expected.config_differences) listed |= d.key == "mode";
  CHECK(listed);
}

TEST_CASE("diff_json lists the differing leaves by dotted path, absent ones too") {
  const nlohmann::json a = {{"mode", "recompile"},
                            {"plateau", {{"factor", 0.1}, {"patience", 10}}}};
  const nlohmann::json b = {
      {"mode", "mutable"}, {"plateau", {{"factor", 0.1}, {"patience", 5}}}, {"faults", {"leak"}}};
  const std::vector<ConfigDifference> d = diff_json(a, b, "config");
  REQUIRE(d.size() == 3);
  CHECK(d[0].key == "config.faults");
  CHECK(d[0].a == "(absent)");
  CHECK(d[0].b == "[\"leak\"]");
  CHECK(d[1].key == "config.mode");
  CHECK(d[2].key == "config.plateau.patience");
  CHECK(d[2].a == "10");
  CHECK(d[2].b == "5");
  CHECK(diff_json(a, a, "config").empty());
}
