// `recompdiag calibrate` end to end on the built-in trainer: the pairs it runs (the planted side
// slowed and saying so), the file `ab --calibration` then prints beside its verdict, a file of
// another job refused after the reports are written, and every bad input one line and 2 (4 for a
// failing side).

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#include "recompdiag/core/run_io.h"
#include "test_util.h"

namespace {

using namespace recompdiag;

/// The trainer's small config as a job: 5 epochs of 4 steps, a few seconds.
std::string job(const std::string& epochs = "3,2") {
  return std::string(RECOMPDIAG_BIN) + " train --quiet --epochs " + epochs +
         " --steps-per-epoch 4 --batch-size 8 --seq-len 6 --hidden 8 --threads 1 --out {out}";
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE("calibrate: same-job and planted pairs, their rates, and ab --calibration") {
  test::TempDir dir;
  const std::string out = dir.file("cal");
  const test::CliOutcome cal = test::run_cli("calibrate --cmd " + quoted(job()) +
                                             " --pairs 2 --start-wait 5 --out-dir " + out);
  INFO(cal.output);
  REQUIRE(cal.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(test::read_text(out + "/calibration.json"));
  CHECK(j["type"] == "calibration");
  const int64_t false_verdicts = j["false_verdicts"]["events"];
  const int64_t detections = j["detections"]["events"];
  CHECK(j["false_verdicts"]["pairs"] == 2);
  CHECK(j["false_verdict_rate"].get<double>() == doctest::Approx(false_verdicts / 2.0));
  CHECK(j["detection_rate"].get<double>() == doctest::Approx(detections / 2.0));
  CHECK(j["job"]["phase_steps"] == nlohmann::json::array({12, 8}));
  CHECK(j["detectable_slowdown"].get<double>() > 0.05);  // never below the threshold
  // Each pair has its line, and the summary names both rates.
  for (const char* line : {"pair 1/2, same job: ", "pair 1/2, planted 10%: ",
                           "pair 2/2, same job: ", "pair 2/2, planted 10%: "}) {
    CHECK(cal.output.find(line) != std::string::npos);
  }
  CHECK(cal.output.find("false verdicts " + std::to_string(false_verdicts * 50) + "% of 2") !=
        std::string::npos);
  // The planted side, and only it, carries the slowdown and says so in its header.
  CHECK(read_run_file(out + "/planted-1/b.jsonl").header.planted_slowdown_pct == 10.0);
  CHECK(read_run_file(out + "/planted-1/a.jsonl").header.planted_slowdown_pct == 0.0);
  CHECK(read_run_file(out + "/same-2/b.jsonl").header.planted_slowdown_pct == 0.0);

  // ab prints the calibration beside its verdict.
  const std::string ab_dir = dir.file("ab");
  const std::string ab_args = " --start-wait 5 --quiet --calibration " + out + "/calibration.json";
  const test::CliOutcome ab = test::run_cli("ab --a-cmd " + quoted(job()) + " --b-cmd " +
                                            quoted(job()) + " --out-dir " + ab_dir + ab_args);
  INFO(ab.output);
  CHECK((ab.exit_code == 0 || ab.exit_code == 1));
  CHECK(ab.output.find("calibrated on ") != std::string::npos);

  // Another job's: exit 2 with one line, after the reports are written.
  const std::string other_dir = dir.file("other");
  const test::CliOutcome other =
      test::run_cli("ab --a-cmd " + quoted(job("8,2")) + " --b-cmd " + quoted(job("8,2")) +
                    " --out-dir " + other_dir + ab_args);
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("a calibration of another job (mode 'recompile', 2 phases of 12, 8 "
                          "steps) than this one (mode 'recompile', 2 phases of 32, 8 steps)") !=
        std::string::npos);
  CHECK(std::filesystem::exists(other_dir + "/report.json"));
  CHECK(std::filesystem::exists(other_dir + "/b.jsonl"));
}

TEST_CASE("calibrate --until-decided: each trial is ab --until-decided's sequence of pairs") {
  test::TempDir dir;
  const std::string out = dir.file("cal");
  const test::CliOutcome cal =
      test::run_cli("calibrate --cmd " + quoted(job()) +
                    " --pairs 2 --until-decided --max-pairs 3 --start-wait 5 --out-dir " + out);
  INFO(cal.output);
  REQUIRE(cal.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(test::read_text(out + "/calibration.json"));
  CHECK(j["until_decided"] == true);
  CHECK(j["max_pairs"] == 3);
  CHECK(j["false_verdicts"]["pairs"] == 2);  // trials, not pairs
  // Each trial ran 1 to 3 pairs, and its files are there: pair k of trial K in DIR/same-K.
  int64_t same_pairs = 0;
  for (int k = 1; k <= 2; ++k) {
    int pairs = 0;
    while (std::filesystem::exists(out + "/same-" + std::to_string(k) + "/a-" +
                                   std::to_string(pairs + 1) + ".jsonl")) {
      ++pairs;
    }
    CHECK((pairs >= 1 && pairs <= 3));
    same_pairs += pairs;
  }
  CHECK(j["same_pairs_run"] == same_pairs);
  CHECK(j["planted_pairs_run"].get<int64_t>() >= 2);
  CHECK(cal.output.find("trial 1/2, same job: ") != std::string::npos);
  CHECK(cal.output.find("pairs until decided (at most 3)") != std::string::npos);
  // ab without --until-decided is told the calibration is another gate's.
  const test::CliOutcome ab = test::run_cli(
      "ab --a-cmd " + quoted(job()) + " --b-cmd " + quoted(job()) + " --out-dir " + dir.file("ab") +
      " --start-wait 5 --quiet --calibration " + out + "/calibration.json");
  INFO(ab.output);
  CHECK((ab.exit_code == 0 || ab.exit_code == 1));
  CHECK(ab.output.find("was calibrated with --until-decided and this gate runs without it") !=
        std::string::npos);
  // Until decided with fewer pairs: each look's level is another, and it says so.
  const test::CliOutcome fewer = test::run_cli(
      "ab --a-cmd " + quoted(job()) + " --b-cmd " + quoted(job()) + " --out-dir " +
      dir.file("ab2") + " --until-decided --max-pairs 2 --start-wait 5 --quiet --calibration " +
      out + "/calibration.json");
  INFO(fewer.output);
  CHECK((fewer.exit_code == 0 || fewer.exit_code == 1));
  CHECK(fewer.output.find("was calibrated with --max-pairs 3 and this gate runs 2") !=
        std::string::npos);
}

TEST_CASE("calibrate: bad input is one line and 2; a failing side 4, as in ab") {
  test::TempDir dir;
  const std::string out = " --start-wait 1 --out-dir " + dir.file("cal");
  struct Case {
    std::string args;
    int code;
    std::string words;
  };
  const Case cases[] = {
      {"--cmd 'python train.py'", 2, "calibrate --cmd must contain {out}"},
      {"--cmd " + quoted(job()) + " --slowdown 0", 2, "--slowdown must be a percentage"},
      {"--cmd " + quoted(job()) + " --slowdown 1000", 2, "--slowdown must be a percentage"},
      {"--cmd " + quoted(job()) + " --pairs 1", 2, "--pairs must be in [2, 200]"},
      {"--cmd " + quoted(job()) + " --until-decided --max-pairs 1", 2,
       "--max-pairs must be in [2, 100], got 1"},
      {"--cmd " + quoted(job()) + " --max-pairs 3", 2, "--max-pairs applies to --until-decided"},
      {"--cmd 'no_such_command_here {out}'", 2, "the command cannot be started"},
      {"--cmd 'true {out}'", 2, "exited 0 but wrote no run file"},
      {"--cmd 'exit 1; {out}'", 4, "run failed (exit 1)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const test::CliOutcome o = test::run_cli("calibrate " + c.args + out);
    INFO(o.output);
    CHECK(o.exit_code == c.code);
    CHECK(o.output.find(c.words) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("cal/calibration.json")));
  }
  const test::CliOutcome missing = test::run_cli(
      "ab --a-cmd 'a {out}' --b-cmd 'b {out}' "
      "--calibration /nonexistent.json");
  CHECK(missing.exit_code == 2);
  CHECK(missing.output ==
        "recompdiag: error: /nonexistent.json: cannot open the calibration "
        "file\n");
}
