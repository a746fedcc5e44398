// `recompdiag calibrate`'s figures and file: the rates' intervals, the file read back, and a
// calibration refused for another job.

#include "recompdiag/runner/calibrate.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "recompdiag/core/error.h"

using namespace recompdiag;
using namespace recompdiag::runner;

namespace {

std::string temp_file(const std::string& text) {
  char path[] = "/tmp/calibrate_test_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

Calibration sample() {
  Calibration c;
  c.command = "python train.py {out}";
  c.host = "ci-7";
  c.created = "2026-12-06T06:15:52Z";
  c.false_verdicts = wilson_rate(0, 10);
  c.detections = wilson_rate(9, 10);
  c.same_not_settled = 2;
  c.planted_not_settled = 1;
  c.detectable = 0.062;
  c.phase_steps = 96;
  c.steps_needed = 40;
  c.compile_spread = 0.041;
  c.compile_spread_df = 8.0;
  c.mode = "compiled";
  c.phase_steps_seen = {96, 40};
  return c;
}

// A comparison of a job of `mode` whose phases have `steps`.
Comparison job(const std::string& mode, const std::vector<int64_t>& steps) {
  Comparison c;
  c.a.header.mode = mode;
  int64_t first = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    PhaseAnalysis p;
    p.phase = static_cast<int>(i) + 1;
    p.first_step = first;
    p.last_step = first + steps[i] - 1;
    first += steps[i];
    c.a.phases.push_back(p);
  }
  return c;
}

}  // namespace

TEST_CASE("wilson_rate: the rate with Wilson's 95% interval, never outside [0, 1]") {
  const MeasuredRate none = wilson_rate(0, 10);
  CHECK(none.rate == 0.0);
  CHECK(none.low == 0.0);
  CHECK(none.high == doctest::Approx(0.2775).epsilon(0.001));  // the textbook 0/10 bound
  const MeasuredRate nine = wilson_rate(9, 10);
  CHECK(nine.rate == doctest::Approx(0.9));
  CHECK(nine.low == doctest::Approx(0.5958).epsilon(0.001));
  CHECK(nine.high == doctest::Approx(0.9821).epsilon(0.001));
  CHECK(wilson_rate(10, 10).high == 1.0);
  CHECK(wilson_rate(5, 10).low == doctest::Approx(1.0 - wilson_rate(5, 10).high));
  CHECK_THROWS_AS(wilson_rate(3, 2), std::invalid_argument);
  CHECK_THROWS_AS(wilson_rate(0, 0), std::invalid_argument);
}

TEST_CASE("calibration file: what calibration_json writes, read_calibration reads") {
  const nlohmann::ordered_json j = calibration_json(sample());
  CHECK(j["false_verdict_rate"] == 0.0);
  CHECK(j["detection_rate"] == doctest::Approx(0.9));
  const std::string path = temp_file(j.dump(2));
  const Calibration back = read_calibration(path);
  CHECK(back.command == "python train.py {out}");
  CHECK(back.detections.events == 9);
  CHECK(back.detections.low == doctest::Approx(sample().detections.low));
  CHECK(back.compile_spread == doctest::Approx(0.041));
  CHECK(back.phase_steps_seen == std::vector<int64_t>{96, 40});
  CHECK(back.steps_needed == 40);
  std::remove(path.c_str());

  Calibration unmeasured = sample();
  unmeasured.compile_spread.reset();
  const std::string none = temp_file(calibration_json(unmeasured).dump());
  CHECK_FALSE(read_calibration(none).compile_spread.has_value());
  std::remove(none.c_str());
}

TEST_CASE("calibration file: anything else is one line naming the file") {
  CHECK_THROWS_WITH_AS(read_calibration("/nonexistent/cal.json"),
                       "/nonexistent/cal.json: cannot open the calibration file", InputError);
  nlohmann::ordered_json other_schema = calibration_json(sample());
  other_schema["schema"] = 2;
  nlohmann::ordered_json missing = calibration_json(sample());
  missing.erase("detections");
  nlohmann::ordered_json bad_spread = calibration_json(sample());
  bad_spread["compile_spread"] = -1.0;
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not a calibration file"},
      {R"({"type": "noise_profile", "schema": 1})", "not a calibration file"},
      {other_schema.dump(), "calibration schema 2 is not 1"},
      {missing.dump(), "malformed calibration file"},
      {bad_spread.dump(), "compile_spread must be in (0, 5)"},
  };
  for (const auto& c : cases) {  // not a structured binding: CAPTURE's lambda cannot take one
    const std::string& text = c.first;
    CAPTURE(text);
    const std::string path = temp_file(text);
    const std::string expected = path + ": " + c.second;
    CHECK_THROWS_WITH_AS(read_calibration(path), doctest::Contains(expected.c_str()), InputError);
    std::remove(path.c_str());
  }
}

TEST_CASE("a calibration of another job is refused: its mode, its phases, their lengths") {
  const Calibration c = sample();
  CHECK_NOTHROW(check_calibration_fits(c, job("compiled", {96, 40}), "cal.json"));
  CHECK_NOTHROW(check_calibration_fits(c, job("compiled", {150, 25}), "cal.json"));  // within 2x
  CHECK_THROWS_WITH_AS(check_calibration_fits(c, job("eager", {96, 40}), "cal.json"),
                       doctest::Contains("cal.json: a calibration of another job (mode "
                                         "'compiled', 2 phases of 96, 40 steps) than this one "
                                         "(mode 'eager'"),
                       InputError);
  CHECK_THROWS_AS(check_calibration_fits(c, job("compiled", {96}), "cal.json"), InputError);
  CHECK_THROWS_AS(check_calibration_fits(c, job("compiled", {300, 40}), "cal.json"), InputError);
  CHECK_THROWS_AS(check_calibration_fits(c, job("compiled", {96, 19}), "cal.json"), InputError);
}

TEST_CASE("calibration_line: the rates with their intervals and the detectable slowdown") {
  CHECK(calibration_line(sample()) ==
        "calibrated on ci-7 (2026-12-06, 10 + 10 pairs of the job): false verdicts 0% of 10 (95% "
        "CI 0%-28%); a 10% slowdown found in 90% of 10 (95% CI 60%-98%); 80% power from 6.2%");
}

TEST_CASE("calibration_advice: only a false-verdict rate above alpha asks for another gate") {
  Calibration c = sample();
  CHECK(calibration_advice(c).empty());   // 0 of 10
  c.false_verdicts = wilson_rate(1, 10);  // 95% CI 1.8%-40%: alpha 5% inside
  CHECK(calibration_advice(c).empty());
  c.false_verdicts = wilson_rate(2, 10);  // 5.7%-51%: above alpha
  CHECK(calibration_advice(c) ==
        "one pair per verdict errs more often than alpha 0.05 on this runner (false verdicts 20% "
        "of 10 (95% CI 5.7%-51%)): gate with `ab --until-decided` and calibrate that gate "
        "(`calibrate --until-decided`)");
  c.until_decided = true;
  c.max_pairs = 5;
  CHECK(calibration_advice(c).find("the gate, pairs until decided, errs more often than alpha "
                                   "0.05") == 0);
  c.alpha = 0.25;  // a looser gate: 2 of 10 is within its alpha
  CHECK(calibration_advice(c).empty());
}

TEST_CASE("calibrate's options: one line for the first bad one, before anything runs") {
  CalibrateOptions o;
  o.command = "python train.py {out}";
  CHECK_NOTHROW(o.validate());
  const auto refused = [](CalibrateOptions bad, const std::string& words) {
    CAPTURE(words);
    CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains(words.c_str()), InputError);
  };
  CalibrateOptions no_out = o;
  no_out.command = "python train.py";
  refused(no_out, "calibrate --cmd must contain {out}");
  for (double pct : {0.0, -5.0, 1000.0}) {
    CalibrateOptions bad = o;
    bad.slowdown_pct = pct;
    refused(bad, "--slowdown must be a percentage in (0, 200]");
  }
  CalibrateOptions one_pair = o;
  one_pair.pairs = 1;
  refused(one_pair, "--pairs must be in [2, 200]");
  CalibrateOptions bad_alpha = o;
  bad_alpha.gate.compare.alpha = 1.5;
  CHECK_THROWS_AS(bad_alpha.validate(), InputError);
  CalibrateOptions bad_cpus = o;
  bad_cpus.cpus = "x";
  CHECK_THROWS_AS(bad_cpus.validate(), InputError);
}
