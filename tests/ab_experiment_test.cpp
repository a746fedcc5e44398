// The A/B experiment's options: what is checked before anything trains, where run files go, and
// which configuration differences are by design.

#include "recompdiag/trainer/ab_experiment.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("ab experiment: the default sides are the two modes, differing only by design") {
  AbExperimentOptions o;
  CHECK_NOTHROW(o.validate());
  CHECK(o.a.config.mode == TrainMode::kRecompile);
  CHECK(o.b.config.mode == TrainMode::kMutable);
  const std::vector<std::string> expected = o.expected_differences();
  CHECK(contains(expected, "config.mode"));
  CHECK(contains(expected, "config.optimizer_handoff"));
  CHECK(contains(expected, "mode"));
  CHECK_FALSE(contains(expected, "config.seed"));
}

TEST_CASE("ab experiment: a fault on side B is an expected difference, nothing else is") {
  AbExperimentOptions o;
  o.a.name = "healthy";
  o.a.config.mode = TrainMode::kMutable;
  o.b.name = "extra-work";
  o.b.config = o.a.config;
  o.b.config.faults = parse_faults("extra-work=10");
  CHECK(o.expected_differences() == std::vector<std::string>{"config.faults"});
  o.b.config.faults = {};
  CHECK(o.expected_differences().empty());
}

TEST_CASE("ab experiment: run files are DIR/NAME.jsonl, numbered when repeated") {
  AbExperimentOptions o;
  o.out_dir = "out";
  CHECK(o.run_path('a', 1) == "out/recompile.jsonl");
  CHECK(o.run_path('b', 1) == "out/mutable.jsonl");
  o.repeats = 3;
  CHECK(o.run_path('a', 2) == "out/recompile-2.jsonl");
  CHECK(o.run_path('b', 3) == "out/mutable-3.jsonl");
}

TEST_CASE("ab experiment: bad options are InputErrors before anything runs") {
  AbExperimentOptions o;
  o.repeats = 0;
  CHECK_THROWS_AS(o.validate(), InputError);
  o = {};
  o.b.name = o.a.name;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("collide"), InputError);
  o = {};
  o.a.name = "../up";
  CHECK_THROWS_AS(o.validate(), InputError);
  o = {};
  o.b.config.steps_per_epoch = 0;
  CHECK_THROWS_AS(o.validate(), InputError);
  o = {};
  o.metrics.listen_addr = "not an address:x";
  CHECK_THROWS_AS(o.validate(), InputError);
  o = {};
  o.out_dir = "";
  CHECK_THROWS_AS(o.validate(), InputError);
}

}  // namespace recompdiag::trainer

namespace recompdiag::trainer {

TEST_CASE("compare options: turns are paired by epoch, runs in sequence as pairs of runs") {
  AbExperimentOptions o;  // recompile against mutable
  CompareOptions base;
  base.run_noise = 0.04;
  o.schedule = AbSchedule::kInterleaved;
  const CompareOptions turns = o.compare_options(base);
  CHECK(turns.turns);
  CHECK(turns.paired);
  CHECK(turns.expected_differences == o.expected_differences());
  CHECK_FALSE(turns.expected_differences.empty());
  o.schedule = AbSchedule::kSequential;
  CHECK_FALSE(o.compare_options(base).turns);
  CHECK(o.compare_options(base).paired);
  CHECK(o.compare_options(base).run_noise == 0.04);
  o.schedule = AbSchedule::kBlocked;
  CHECK_FALSE(o.compare_options(base).paired);
  CHECK(o.compare_options(base).threshold == base.threshold);
}

}  // namespace recompdiag::trainer
