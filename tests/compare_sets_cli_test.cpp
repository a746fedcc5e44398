// `recompdiag compare` with several runs per side: files, directories and globs; the gate's exit
// codes; bad inputs named. Also `ab --repeats` and the smallest `bench gate`.

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/synthetic_run.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

using Result = test::CliOutcome;

Result recompdiag_cli(const std::string& args) { return test::run_cli(args); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// DIR/NAME/run-i.jsonl for i in [0, n), synthetic, seeds from `seed`.
void write_runs(const test::TempDir& dir, const std::string& name, int n, SyntheticRunOptions o,
                uint64_t seed) {
  std::filesystem::create_directories(dir.file(name));
  for (int i = 0; i < n; ++i) {
    o.seed = seed + static_cast<uint64_t>(i);
    write_synthetic_run(dir.file(name + "/run-" + std::to_string(i) + ".jsonl"), o);
  }
}

SyntheticRunOptions small() {
  SyntheticRunOptions o;
  o.phase_steps = {100, 100};
  return o;
}

}  // namespace

TEST_CASE("compare: directories and globs per side, the run as the unit") {
  test::TempDir dir;
  write_runs(dir, "a", 3, small(), 1);
  write_runs(dir, "b", 3, small(), 11);
  SyntheticRunOptions slow = small();
  slow.phase_scale = {1.0, 1.25};
  write_runs(dir, "slow", 3, slow, 21);
  Result same =
      recompdiag_cli("compare --a " + dir.file("a") + " --b '" + dir.file("b/run-*.jsonl") + "'");
  CHECK(same.exit_code == 0);
  CHECK(contains(same.output, "**no change**"));
  CHECK(contains(same.output, "3 vs 3 runs, the run is the unit"));
  Result slower = recompdiag_cli("compare --a " + dir.file("a/run-0.jsonl") + " --a " +
                                 dir.file("a/run-1.jsonl") + " --a " + dir.file("a/run-2.jsonl") +
                                 " --b " + dir.file("slow") + " --format json");
  CHECK(slower.exit_code == 1);
  CHECK(contains(slower.output, "\"verdict\": \"regression\""));
  CHECK(contains(slower.output, "\"unit\": \"runs\""));
}

TEST_CASE("compare: --fail-on fails the gate on counts alone; inconclusive warns") {
  test::TempDir dir;
  SyntheticRunOptions quiet = small();
  quiet.switch_compiles = 0;
  SyntheticRunOptions recompiling = small();
  recompiling.switch_compiles = 3;
  write_runs(dir, "a", 2, quiet, 1);
  write_runs(dir, "b", 2, recompiling, 11);
  const std::string sides = "--a " + dir.file("a") + " --b " + dir.file("b");
  Result plain = recompdiag_cli("compare " + sides);
  CHECK(plain.exit_code == 0);
  CHECK(contains(plain.output, "B: 3 more JIT compiles in phase 2 (0 -> 3)"));
  Result gated = recompdiag_cli("compare " + sides + " --fail-on compiles,syncs");
  CHECK(gated.exit_code == 1);
  CHECK(contains(gated.output, "(--fail-on compiles)"));

  // Nothing can be significant nor proven equivalent at this alpha: inconclusive.
  SyntheticRunOptions slow = small();
  slow.phase_scale = {1.0, 1.3};
  write_runs(dir, "slow", 1, slow, 31);
  const std::string pair = dir.file("a/run-0.jsonl") + " " + dir.file("slow/run-0.jsonl");
  Result weak = recompdiag_cli("compare " + pair + " --alpha 1e-300");
  CHECK(weak.exit_code == 0);
  CHECK(contains(weak.output, "warning: inconclusive: "));
  CHECK(contains(weak.output, "--strict-inconclusive makes it 1"));
  CHECK(recompdiag_cli("compare " + pair + " --alpha 1e-300 --strict-inconclusive").exit_code == 1);
}

TEST_CASE("compare: bad multi-file input exits 2 and names the file") {
  test::TempDir dir;
  write_runs(dir, "a", 2, small(), 1);
  write_runs(dir, "b", 2, small(), 11);
  SyntheticRunOptions other = small();
  other.mode = "mutable";
  write_runs(dir, "odd", 1, other, 5);
  auto expect_error = [](const std::string& args, const std::string& message) {
    Result r = recompdiag_cli("compare " + args);
    CAPTURE(args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "recompdiag: error: "));
    CHECK(contains(r.output, message));
  };
  const std::string b = " --b " + dir.file("b");
  // A side with runs of different configurations.
  expect_error("--a " + dir.file("a") + " --a " + dir.file("odd/run-0.jsonl") + b,
               "odd/run-0.jsonl: its configuration differs from");
  // One unreadable file among several.
  test::write_text(dir.file("broken.jsonl"), "not json\n");
  expect_error("--a " + dir.file("a") + " --a " + dir.file("broken.jsonl") + b, "broken.jsonl:1:");
  expect_error("--a " + dir.file("a") + " --a " + dir.file("gone.jsonl") + b,
               "gone.jsonl: cannot open run file");
  std::filesystem::create_directories(dir.file("empty"));
  expect_error("--a " + dir.file("empty") + b, "no *.jsonl run files in it");
  expect_error("--a '" + dir.file("none-*.jsonl") + "'" + b, "no file matches");
  expect_error(dir.file("a/run-0.jsonl") + " --a " + dir.file("a/run-1.jsonl") + b,
               "either as an argument or with --a, not both");
  expect_error(b, "no run files for side A");
  expect_error("--a " + dir.file("a") + " --b " + dir.file("a/run-1.jsonl"), "the same file as");
  expect_error("--a " + dir.file("a") + b + " --fail-on compile", "unknown count 'compile'");
  expect_error("--a " + dir.file("a") + b + " --confidence 100",
               "--confidence must be a percentage in (0, 100), got 100");
}

TEST_CASE("ab --repeats 2: two interleaved pairs, compared as pairs of runs") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  Result r = recompdiag_cli(
      "ab --repeats 2 --epochs 3,2 --steps-per-epoch 6 --batch-size 4 --seq-len 6 --hidden 8 "
      "--threads 1 --quiet --out-dir " +
      out);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));  // a verdict, whichever the noise allows
  for (const char* f : {"recompile-1.jsonl", "recompile-2.jsonl", "mutable-1.jsonl",
                        "mutable-2.jsonl", "report.json"}) {
    CAPTURE(f);
    CHECK(std::filesystem::exists(out + "/" + f));
  }
  CHECK(contains(r.output, "2 pairs of runs, the pair is the unit"));
  const std::string json = test::read_text(out + "/report.json");
  CHECK(contains(json, "\"unit\": \"runs\""));
  CHECK(contains(json, "\"paired\": true"));
  CHECK(recompdiag_cli("ab --repeats 0 --quiet --out-dir " + out).exit_code == 2);
}

TEST_CASE("bench gate, smallest size: the JSON has the issue's shape") {
  test::TempDir dir;
  const std::string json_path = dir.file("gate.json");
  Result r = recompdiag_cli(
      "bench gate --pairs 1 --runs 2 --epochs 3,2 --steps-per-epoch 5 --batch-size 4 --seq-len 6 "
      "--hidden 8 --threads 1 --noise-runs 3 --quiet --out-dir " +
      dir.file("runs") + " --json " + json_path + " --baseline-json " + dir.file("base.json"));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "baseline, the step-level test"));
  CHECK(contains(r.output, "1 run per side + measured profile"));
  CHECK(contains(r.output, "1 pair taking turns (ab), by step"));
  for (const std::string& path : {json_path, dir.file("base.json")}) {
    const nlohmann::json j = nlohmann::json::parse(test::read_text(path));
    CHECK(j["pairs"] == 1);
    // The gate has every mode; the step-level baseline only the independent runs.
    const bool gate = path == json_path;
    const std::vector<std::string> modes =
        gate ? std::vector<std::string>{"1", "2", "1+profile", "turns"}
             : std::vector<std::string>{"1", "2"};
    REQUIRE(j["false_verdict_rate"].size() == modes.size());
    if (gate) {
      CHECK(j["noise_profile"]["runs"] == 3);
      CHECK(j["run_spread"].get<double>() >= 0.0);
    }
    for (const std::string& runs : modes) {
      const double rate = j["false_verdict_rate"][runs].get<double>();
      CHECK(rate >= 0.0);
      CHECK(rate <= 1.0);
    }
    REQUIRE(j["detection_rate"].size() == 3);
    for (const char* level : {"5", "10", "20"}) {
      CAPTURE(level);
      for (const std::string& runs : modes) CHECK(j["detection_rate"][level].contains(runs));
    }
  }
  CHECK(recompdiag_cli("bench gate --runs 1 --quiet").exit_code == 2);
  CHECK(recompdiag_cli("bench gate --noise-runs 2 --quiet").exit_code == 2);
  CHECK(recompdiag_cli("bench gate --levels 5,x --quiet").exit_code == 2);
}

TEST_CASE("bench noise: measures healthy runs into a profile that compare reads") {
  test::TempDir dir;
  const std::string profile = dir.file("noise.json");
  Result r = recompdiag_cli(
      "bench noise --runs 3 --epochs 3,2 --steps-per-epoch 5 --batch-size 4 --seq-len 6 "
      "--hidden 8 --threads 1 --quiet --out-dir " +
      dir.file("runs") + " --out " + profile);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "bench noise: 3 runs; run-to-run spread of the steady median: phase 1"));
  const nlohmann::json j = nlohmann::json::parse(test::read_text(profile));
  CHECK(j["type"] == "noise_profile");
  CHECK(j["runs"] == 3);
  CHECK(j["degrees_of_freedom"] == 2);
  REQUIRE(j["phases"].size() == 2);
  CHECK(j["phases"][0]["medians_ms"].size() == 3);
  // The same from the stored runs, without training.
  Result from =
      recompdiag_cli("bench noise --from " + dir.file("runs") + " --out " + dir.file("again.json"));
  REQUIRE(from.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_text(dir.file("again.json")))["run_noise"] ==
        j["run_noise"]);
  // compare judges one run per side with it, and names it.
  Result c = recompdiag_cli("compare " + dir.file("runs/noise-1.jsonl") + " " +
                            dir.file("runs/noise-2.jsonl") + " --noise-profile " + profile);
  INFO("exit code ", c.exit_code, ", output:\n", c.output);
  CHECK((c.exit_code == 0 || c.exit_code == 1));  // a verdict, whichever the noise allows
  CHECK(contains(c.output, "run-to-run spread from noise profile " + profile + ": 3 runs"));
  // Bad input: one line, exit 2 (ab reads the profile before anything trains).
  CHECK(recompdiag_cli("ab --sequential --quiet --noise-profile " + dir.file("missing.json") +
                       " --out-dir " + dir.file("ab"))
            .exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("ab")));
  CHECK(recompdiag_cli("bench noise --runs 2 --quiet").exit_code == 2);
  CHECK(recompdiag_cli("bench noise --fault host-sync --quiet").exit_code == 2);
  CHECK(recompdiag_cli("bench noise --from " + dir.file("runs/noise-1.jsonl") + " --out " +
                       dir.file("x.json"))
            .exit_code == 2);  // fewer than three runs
}
