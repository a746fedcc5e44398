// lib's options structs check themselves: each validate() names the first value out of range in
// one line, and the function that takes the options refuses what validate() refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/column_cache.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/convergence.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/core/straggler.h"
#include "recompdiag/core/synthetic_run.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// The message `check` throws as InputError; empty when it throws nothing.
std::string refusal(const std::function<void()>& check) {
  try {
    check();
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("require_in_range words the range as asked, NaN refused") {
  CHECK(refusal([] { require_in_range("x", 0.5, 0.0, 1.0, true, true); }).empty());
  CHECK(refusal([] { require_in_range("x", 0.0, 0.0, 1.0, false, false); }).empty());
  CHECK(refusal([] { require_in_range("x", 1.0, 0.0, 1.0, true, true); }) ==
        "x must be in (0, 1), got 1");
  CHECK(refusal([] { require_in_range("x", -1.0, 0.0, 1.0, false, false); }) ==
        "x must be in [0, 1], got -1");
  CHECK(refusal([] { require_in_range("x", 0.5, 1.0, HUGE_VAL, false, true); }) ==
        "x must be >= 1, got 0.5");
  CHECK(refusal([] { require_in_range("x", 0.0, 0.0, HUGE_VAL, true, true); }) ==
        "x must be > 0, got 0");
  CHECK(refusal([] { require_in_range("x", std::nan(""), 0.0, HUGE_VAL, false, true); }) ==
        "x must be >= 0, got nan");
}

TEST_CASE("the statistics' options: the flags' words, and CompareOptions checks through them") {
  stats::BootstrapOptions b;
  CHECK(refusal([&] { b.validate(); }).empty());
  b.resamples = 0;
  CHECK(refusal([&] { b.validate(); }) == "--resamples must be >= 1, got 0");
  b = {};
  b.confidence = 1.0;
  CHECK(refusal([&] { b.validate(); }) == "--confidence must be a percentage in (0, 100), got 100");

  stats::RatioTestOptions r;
  CHECK(refusal([&] { r.validate(); }).empty());
  r.threshold = -0.01;
  CHECK(refusal([&] { r.validate(); }) == "--threshold must be a percentage in [0, 100), got -1");
  r = {};
  r.alpha = 0.0;
  CHECK(refusal([&] { r.validate(); }) == "--alpha must be in (0, 1), got 0");
  r = {};
  r.power = 1.0;
  CHECK(refusal([&] { r.validate(); }) == "--power must be in (0, 1), got 1");

  // CompareOptions::validate() refuses what its parts refuse, in the same words.
  CompareOptions c;
  CHECK(refusal([&] { c.validate(); }).empty());
  c.power = 2.0;
  CHECK(refusal([&] { c.validate(); }) == "--power must be in (0, 1), got 2");
  c = {};
  c.bootstrap.resamples = -3;
  CHECK(refusal([&] { c.validate(); }) == "--resamples must be >= 1, got -3");
  c = {};
  c.run_noise = 1.0;
  CHECK(refusal([&] { c.validate(); }) == "--run-noise must be a percentage in [0, 100), got 100");
  c = {};
  c.compile_spread = 0.0;
  CHECK(refusal([&] { c.validate(); }) ==
        "--compile-spread must be a percentage in (0, 500), got 0");
  c = {};
  c.analysis.slow_factor = 0.9;
  CHECK(refusal([&] { c.validate(); }) == "AnalysisOptions::slow_factor must be >= 1, got 0.9");
}

TEST_CASE("AnalysisOptions: validate() names the field, analyze_run() refuses it") {
  const std::vector<std::pair<std::function<void(AnalysisOptions&)>, std::string>> cases = {
      {[](AnalysisOptions& o) { o.warmup_window = 0; },
       "AnalysisOptions::warmup_window must be >= 1, got 0"},
      {[](AnalysisOptions& o) { o.warmup_tolerance = -0.1; },
       "AnalysisOptions::warmup_tolerance must be >= 0, got -0.1"},
      {[](AnalysisOptions& o) { o.max_warmup_fraction = 1.5; },
       "AnalysisOptions::max_warmup_fraction must be in [0, 1], got 1.5"},
      {[](AnalysisOptions& o) { o.stretch_gap = -1; },
       "AnalysisOptions::stretch_gap must be >= 0, got -1"},
      {[](AnalysisOptions& o) { o.loss_window = 0; },
       "AnalysisOptions::loss_window must be >= 1, got 0"},
      {[](AnalysisOptions& o) { o.chart_points = 0; },
       "AnalysisOptions::chart_points must be >= 1, got 0"},
  };
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  write_synthetic_run(path, {});
  const RunFile run = read_run_file(path);
  CHECK(refusal([&] { analyze_run(run, {}); }).empty());
  for (const auto& [spoil, message] : cases) {
    AnalysisOptions o;
    spoil(o);
    CHECK(refusal([&] { o.validate(); }) == message);
    CHECK(refusal([&] { analyze_run(run, o); }) == message);
  }
}

TEST_CASE("ConvergenceOptions: validate() names the field, every entry refuses it") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  write_synthetic_run(path, {});
  const RunFile run = read_run_file(path);
  ConvergenceOptions o;
  CHECK(refusal([&] { compare_convergence({run}, {run}, o); }).empty());
  o.window = 0;
  CHECK(refusal([&] { o.validate(); }) == "ConvergenceOptions::window must be >= 1, got 0");
  CHECK(refusal([&] { analyze_convergence(run, o); }) ==
        "ConvergenceOptions::window must be >= 1, got 0");
  o = {};
  o.recovery_slack = 0.5;
  CHECK(refusal([&] { compare_convergence({run}, {run}, o); }) ==
        "ConvergenceOptions::recovery_slack must be >= 1, got 0.5");
  o = {};
  o.alpha = 1.0;
  CHECK(refusal([&] { o.validate(); }) == "ConvergenceOptions::alpha must be in (0, 1), got 1");
  o = {};
  o.loss_tolerance = -1.0;
  CHECK(refusal([&] { o.validate(); }) ==
        "ConvergenceOptions::loss_tolerance must be >= 0, got -1");
}

TEST_CASE("StragglerOptions: validate() names the field, analyze_job() refuses it") {
  StragglerOptions o;
  CHECK(refusal([&] { o.validate(); }).empty());
  o.min_wait_share = 1.5;
  CHECK(refusal([&] { o.validate(); }) ==
        "StragglerOptions::min_wait_share must be in [0, 1], got 1.5");
  const RunAnalysis job;
  CHECK(refusal([&] { analyze_job({}, job, o); }) ==
        "StragglerOptions::min_wait_share must be in [0, 1], got 1.5");
  o = {};
  o.min_wait_spread_ms = -2.0;
  CHECK(refusal([&] { o.validate(); }) ==
        "StragglerOptions::min_wait_spread_ms must be >= 0, got -2");
}

TEST_CASE("ColumnCacheOptions: validate() names the field, the cached read refuses it") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  write_synthetic_run(path, {});
  ColumnCacheOptions o;
  o.dir = dir.file("cache");
  CHECK(refusal([&] { read_columnar_run_cached(path, o); }).empty());
  o.min_steps = -1;
  CHECK(refusal([&] { read_columnar_run_cached(path, o); }) ==
        "ColumnCacheOptions::min_steps must be >= 0, got -1");
  o.min_steps = 0;
  o.max_bytes = 0;
  CHECK(refusal([&] { o.validate(); }) == "ColumnCacheOptions::max_bytes must be >= 1, got 0");
}

TEST_CASE("SyntheticRunOptions: validate() names the field; no file is written for bad options") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  const std::vector<std::pair<std::function<void(SyntheticRunOptions&)>, std::string>> cases = {
      {[](SyntheticRunOptions& o) { o.phase_steps.clear(); },
       "SyntheticRunOptions::phase_steps must not be empty"},
      {[](SyntheticRunOptions& o) {
         o.phase_steps = {100, -1};
       },
       "SyntheticRunOptions::phase_steps[i] must be >= 0, got -1"},
      {[](SyntheticRunOptions& o) { o.base_ms = -1.0; },
       "SyntheticRunOptions::base_ms must be >= 0, got -1"},
      {[](SyntheticRunOptions& o) {
         o.phase_scale = {1.0, 0.0};
       },
       "SyntheticRunOptions::phase_scale[i] must be > 0, got 0"},
      {[](SyntheticRunOptions& o) { o.heads = 0; },
       "SyntheticRunOptions::heads must be >= 1, got 0"},
      {[](SyntheticRunOptions& o) { o.steps_per_epoch = 0; },
       "SyntheticRunOptions::steps_per_epoch must be >= 1, got 0"},
  };
  for (const auto& [spoil, message] : cases) {
    SyntheticRunOptions o;
    spoil(o);
    CHECK(refusal([&] { write_synthetic_run(path, o); }) == message);
    CHECK_FALSE(std::filesystem::exists(path));
  }
}
