// `recompdiag ab --world-size N` (issue 11): each run of each pair is a local data-parallel job, the
// report compares the jobs as `compare` does, and signals and crashes reach every rank (of `train
// --world-size` jobs too).

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "recompdiag/core/run_io.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// Small enough that two 2-rank jobs stay quick on 2 cores.
const std::string kSmall = "--epochs 2,1 --steps-per-epoch 4 --batch-size 8 --hidden 8 --quiet";

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<double> step_losses(const RunFile& run) {
  std::vector<double> out;
  for (const StepRecord& s : run.steps) out.push_back(s.loss);
  return out;
}

/// Waits (60 s at most) until `path` holds `steps` step lines.
void wait_for_steps(const std::string& path, int64_t steps) {
  if (test::wait_for_step_lines(path, steps) < steps) {
    FAIL("no " << steps << " steps in " << path << " within 60 s");
  }
}

}  // namespace

TEST_CASE("ab --world-size 2: each run a 2-rank job, the report compares the jobs") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const auto o = test::run_cli("ab --world-size 2 " + kSmall + " --out-dir " + out);
  INFO(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  std::set<std::string> jobs;
  for (const char* side : {"recompile", "mutable"}) {
    CAPTURE(side);
    const RunFile r0 = read_run_file(out + "/" + side + ".rank0.jsonl");
    const RunFile r1 = read_run_file(out + "/" + side + ".rank1.jsonl");
    CHECK(r0.header.world_size == 2);
    CHECK(r1.header.rank == 1);
    CHECK(r0.header.job_id == r1.header.job_id);
    jobs.insert(r0.header.job_id);
    CHECK(r0.steps.size() == 12);
    CHECK(r1.steps.size() == 12);
    REQUIRE(r0.summary.has_value());
    REQUIRE(r1.summary.has_value());
    CHECK(r0.summary->parameters_digest == r1.summary->parameters_digest);
    CHECK(step_losses(r0) == step_losses(r1));
  }
  CHECK(jobs.size() == 2);
  const auto report = nlohmann::json::parse(test::read_text(out + "/report.json"));
  CHECK(report["runs_a"].size() == 1);  // a job is one run
  CHECK(report["runs_b"].size() == 1);
  for (const char* key : {"job_a", "job_b"}) {
    CAPTURE(key);
    REQUIRE(report[key].is_object());
    CHECK(report[key]["world_size"] == 2);
    REQUIRE(report[key]["ranks"].size() == 2);
    for (const auto& rank : report[key]["ranks"]) {
      // recompile mode compiles at the start and at the switch; mutable mode at the start only.
      CHECK(rank["compiles"] == (std::string(key) == "job_a" ? 2 : 1));
    }
  }
}

TEST_CASE("ab --world-size 2 --fault recompile-one-rank: only rank 1 compiles at the switch") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const auto o = test::run_cli(
      "ab --world-size 2 --fault recompile-one-rank --epochs 2,2 --steps-per-epoch 6 "
      "--batch-size 8 --hidden 8 --quiet --out-dir " +
      out);
  INFO(o.output);
  // A verdict (exit 1 where the gate finds the planted compile's cost beyond the threshold).
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));
  const auto report = nlohmann::json::parse(test::read_text(out + "/report.json"));
  // Both jobs train in mutable mode, so rank 1's compile at the switch is the fault alone.
  std::vector<int> compiles_a, compiles_b;
  for (const auto& r : report["job_a"]["ranks"]) compiles_a.push_back(r["compiles"]);
  for (const auto& r : report["job_b"]["ranks"]) compiles_b.push_back(r["compiles"]);
  CHECK(compiles_a == std::vector<int>{1, 1});
  CHECK(compiles_b == std::vector<int>{1, 2});
  // Only rank 1 recorded the fault's compile, at the switch.
  const int64_t switch_step = 12;
  for (int r = 0; r < 2; ++r) {
    const RunFile f =
        read_run_file(out + "/recompile-one-rank-1.rank" + std::to_string(r) + ".jsonl");
    int alone = 0;
    for (const EventRecord& e : f.events) {
      if (e.kind == EventKind::kCompile && contains(e.reason, "this rank alone")) {
        CHECK(e.step == switch_step);
        ++alone;
      }
    }
    CHECK(alone == (r == 1 ? 1 : 0));
  }
  // Whether the job's slow steps at the switch stand out from the noise depends on the machine's
  // load (on a busy one the ranks may look slow alike); when a stretch there names a straggler
  // that recompiled, it must be rank 1, the one that did. job_test checks the attribution itself.
  for (const auto& f : report["job_b"]["stragglers"]) {
    const bool at_switch = f["first_step"].get<int64_t>() <= switch_step &&
                           switch_step <= f["last_step"].get<int64_t>();
    if (at_switch && f["cause"].get<std::string>().rfind("recompiled", 0) == 0) {
      INFO(f["sentence"].get<std::string>());
      CHECK(f["straggler"] == 1);
      CHECK(contains(f["cause"].get<std::string>(), "recompile-one-rank=1: this rank alone"));
      CHECK(f["waiters"] == nlohmann::json::array({0}));
    }
  }
}

TEST_CASE("SIGINT to ab --world-size 2 reaches every rank; each job's ranks stop together") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string err = dir.file("stderr.txt");
  const pid_t ab = test::start_cli(
      {"ab", "--world-size", "2", "--epochs", "200,100", "--steps-per-epoch", "10", "--batch-size",
       "4", "--seq-len", "6", "--hidden", "8", "--quiet", "--threads", "1", "--out-dir", out},
      err);
  wait_for_steps(out + "/mutable.rank1.jsonl", 15);
  ::kill(ab, SIGINT);
  int status = 0;
  REQUIRE(::waitpid(ab, &status, 0) == ab);
  INFO(test::read_text(err));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  for (const char* side : {"recompile", "mutable"}) {
    CAPTURE(side);
    const RunFile r0 = read_run_file(out + "/" + side + ".rank0.jsonl");
    const RunFile r1 = read_run_file(out + "/" + side + ".rank1.jsonl");
    for (const RunFile* f : {&r0, &r1}) {
      REQUIRE(f->summary.has_value());
      CHECK(f->summary->status == "interrupted");
      CHECK(f->summary->steps == static_cast<int64_t>(f->steps.size()));
    }
    CHECK(r0.steps.size() == r1.steps.size());  // the ranks agreed on the step to stop after
    CHECK(r0.steps.size() >= 10);
  }
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));
}

TEST_CASE("ab --world-size 2 exits 4 when a rank crashes (no verdict); its peer fails, the other job ends") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string err = dir.file("stderr.txt");
  const pid_t ab = test::start_cli(
      {"ab", "--world-size", "2", "--epochs", "20,10", "--steps-per-epoch", "10", "--batch-size",
       "4", "--seq-len", "6", "--hidden", "8", "--quiet", "--threads", "1", "--out-dir", out},
      err);
  wait_for_steps(out + "/recompile.rank1.jsonl", 12);
  std::vector<pid_t> ranks = test::children_of(ab);
  REQUIRE(ranks.size() == 4);
  std::sort(ranks.begin(), ranks.end());
  ::kill(ranks[1], SIGSEGV);  // as a bug in one rank would
  int status = 0;
  REQUIRE(::waitpid(ab, &status, 0) == ab);
  const std::string text = test::read_text(err);
  INFO(text);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 4);
  CHECK(contains(text, "recompdiag: internal error: "));
  CHECK(contains(text, "was killed by signal 11"));
  // Its peer's line: it failed, it did not hang; in a step's all-reduce or in the turn's barrier
  // between steps, wherever the crash found it.
  CHECK((contains(text, "all-reduce of step") || contains(text, "barrier after step")));
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));
}

TEST_CASE("ab --world-size: bad world sizes and a launcher's rank are bad input, one line") {
  test::TempDir dir;
  struct Case {
    std::string env, args, says;
  };
  const Case cases[] = {
      {"", "--world-size 33 --batch-size 64 --quiet", "ab --world-size 33 is outside [1, 32]"},
      {"", "--world-size 0", "--world-size 0 is outside [1, 64]"},
      {"", "--world-size 9", "smaller than the world size 9"},
      {"", "--world-size 2 --fault recompile-one-rank=2", "the job has ranks 0-1"},
      {"RANK=0 WORLD_SIZE=2", "--world-size 2", "ab starts its jobs' ranks itself"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const std::string flags = contains(c.args, "--batch-size") ? "" : " " + kSmall;
    const std::string args = "ab " + c.args + flags + " --out-dir " + dir.file("ab");
    const auto r = c.env.empty() ? test::run_cli(args) : test::run_cli_env(c.env, args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "recompdiag: error: "));
    CHECK(contains(r.output, c.says));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  CHECK(!std::filesystem::exists(dir.file("ab")));
}

TEST_CASE("SIGINT to train --world-size 2: both ranks stop after the same step, interrupted") {
  test::TempDir dir;
  const std::string out = dir.file("job.jsonl");
  const pid_t launcher =
      test::start_cli({"train", "--world-size", "2", "--epochs", "200,100", "--steps-per-epoch",
                       "10", "--batch-size", "4", "--seq-len", "6", "--hidden", "8", "--quiet",
                       "--threads", "1", "--out", out},
                      dir.file("stderr.txt"));
  wait_for_steps(dir.file("job.rank1.jsonl"), 20);
  ::kill(launcher, SIGINT);
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  INFO(test::read_text(dir.file("stderr.txt")));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const RunFile r0 = read_run_file(dir.file("job.rank0.jsonl"));
  const RunFile r1 = read_run_file(dir.file("job.rank1.jsonl"));
  for (const RunFile* f : {&r0, &r1}) {
    REQUIRE(f->summary.has_value());
    CHECK(f->summary->status == "interrupted");
    CHECK(f->summary->steps == static_cast<int64_t>(f->steps.size()));
  }
  // The stop request travelled with an all-reduce: no rank went on to wait for a stopped peer.
  CHECK(r0.steps.size() == r1.steps.size());
  CHECK(r0.steps.size() >= 20);
}
