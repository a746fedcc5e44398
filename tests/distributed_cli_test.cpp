// Data-parallel training end to end (issue 11): `train --world-size N` on Gloo over loopback, the
// launcher's environment, and every refusal and failure a job can meet.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_util.h"
#include "recompdiag/core/run_io.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// Small enough that a 4-rank job stays quick on 2 cores.
const std::string kSmall = "--epochs 2,1 --steps-per-epoch 4 --batch-size 8 --hidden 8 --quiet";

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Lines of the output that are not empty.
int lines(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size(); ++i) n += s[i] == '\n' && (i == 0 || s[i - 1] != '\n');
  return n;
}

std::vector<double> step_losses(const RunFile& run) {
  std::vector<double> out;
  for (const StepRecord& s : run.steps) out.push_back(s.loss);
  return out;
}

/// Runs a job of `world` ranks into DIR/job.rankK.jsonl and reads every rank file.
std::vector<RunFile> run_job(const test::TempDir& dir, int world, const std::string& extra = "") {
  const auto o = test::run_cli("train --world-size " + std::to_string(world) + " " + kSmall + " " +
                               extra + " --out " + dir.file("job.jsonl"));
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  std::vector<RunFile> files;
  for (int r = 0; r < world; ++r) {
    files.push_back(read_run_file(dir.file("job.rank" + std::to_string(r) + ".jsonl")));
  }
  return files;
}

/// A loopback port nobody listens on now.
int free_port() {
  FILE* p = ::popen(
      "python3 -c \"import socket;s=socket.socket();s.bind(('127.0.0.1',0));"
      "print(s.getsockname()[1])\"",
      "r");
  REQUIRE(p != nullptr);
  int port = 0;
  REQUIRE(std::fscanf(p, "%d", &port) == 1);
  ::pclose(p);
  return port;
}

}  // namespace

TEST_CASE("world sizes 2 and 4: one file per rank, one job id, identical parameters") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    test::TempDir dir;
    const std::vector<RunFile> files = run_job(dir, world);
    std::set<std::string> jobs, digests;
    for (int r = 0; r < world; ++r) {
      const RunFile& f = files[static_cast<size_t>(r)];
      CHECK(f.header.rank == r);
      CHECK(f.header.world_size == world);
      CHECK(f.header.config["distributed"]["backend"] == "gloo");  // which c10d group it used
      jobs.insert(f.header.job_id);
      REQUIRE(f.summary.has_value());
      CHECK(f.summary->status == "completed");
      CHECK(f.summary->parameters_digest.size() == 16);
      digests.insert(f.summary->parameters_digest);
      REQUIRE(f.steps.size() == 12);
      for (const StepRecord& s : f.steps) {
        REQUIRE(s.comm.has_value());
        CHECK(s.comm->collectives == 1);
        CHECK(s.comm->bytes > 0);
        CHECK(s.comm->wait_ms >= 0.0);
      }
      // Every rank records the job's loss: the mean over the ranks.
      CHECK(step_losses(f) == step_losses(files[0]));
    }
    CHECK(jobs.size() == 1);
    CHECK(!jobs.begin()->empty());
    CHECK(digests.size() == 1);  // the ranks stayed in step, bit for bit
  }
}

TEST_CASE("world size 1 trains exactly as the single-process trainer") {
  test::TempDir dir;
  const RunFile rank0 = run_job(dir, 1).front();
  const auto o = test::run_cli("train " + kSmall + " --out " + dir.file("single.jsonl"));
  REQUIRE(o.exit_code == 0);
  const RunFile single = read_run_file(dir.file("single.jsonl"));
  CHECK(step_losses(rank0) == step_losses(single));
  REQUIRE(rank0.summary.has_value());
  REQUIRE(single.summary.has_value());
  CHECK(rank0.summary->parameters_digest == single.summary->parameters_digest);
  CHECK(single.header.world_size == 1);
  CHECK(single.header.job_id.empty());
  CHECK(!single.header.config.contains("distributed"));  // its header as before
  CHECK(!single.steps.front().comm.has_value());  // a single process has no collectives
}

TEST_CASE("uneven shards: a batch of 9 over 2 ranks trains as one process does") {
  // Rank 0 gets 4 rows of each batch, rank 1 gets 5: a plain mean of the two ranks' mean losses
  // and gradients is off by 0.1-1.3% per step on this config; weighted by rows it is the batch's.
  test::TempDir dir;
  const std::string nine = "--epochs 2,1 --steps-per-epoch 4 --batch-size 9 --hidden 8 --quiet";
  auto o = test::run_cli("train --world-size 2 " + nine + " --out " + dir.file("job.jsonl"));
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  const std::vector<RunFile> job = {read_run_file(dir.file("job.rank0.jsonl")),
                                    read_run_file(dir.file("job.rank1.jsonl"))};
  o = test::run_cli("train " + nine + " --out " + dir.file("one.jsonl"));
  REQUIRE(o.exit_code == 0);
  const std::vector<double> single = step_losses(read_run_file(dir.file("one.jsonl")));
  const std::vector<double> losses = step_losses(job[0]);
  REQUIRE(losses.size() == single.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(losses[i] - single[i]) <= 1e-5 * std::abs(single[i]));
  }
  CHECK(step_losses(job[1]) == losses);
  REQUIRE(job[0].summary.has_value());
  REQUIRE(job[1].summary.has_value());
  CHECK(job[0].summary->parameters_digest == job[1].summary->parameters_digest);
}

TEST_CASE("local jobs meet in a FileStore of their own: two at once, nothing left behind") {
  // No port is picked and bound later (the race the TCPStore had): each job's ranks meet in a
  // fresh directory under TMPDIR, removed when the job ends.
  test::TempDir dir;
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directories(tmp);
  const std::string job = "--epochs 1,1 --steps-per-epoch 3 --batch-size 4 --hidden 8 --quiet";
  const std::string bin = RECOMPDIAG_BIN;
  auto train = [&](const char* name) {
    return bin + " train --world-size 2 " + job + " --out " + dir.file(name);
  };
  // Both jobs at once; the shell exits with the first failure.
  const auto o =
      test::run_cli_prefixed("TMPDIR=" + tmp + " sh -c '" + train("x.jsonl") + " & a=$!; " +
                                 train("y.jsonl") + " & b=$!; wait $a && wait $b' 2>&1 #",
                             "");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  std::set<std::string> ids;
  for (const char* name : {"x", "y"}) {
    for (int r = 0; r < 2; ++r) {
      const RunFile f =
          read_run_file(dir.file(std::string(name) + ".rank" + std::to_string(r) + ".jsonl"));
      REQUIRE(f.summary.has_value());
      CHECK(f.summary->status == "completed");
      ids.insert(f.header.job_id);
    }
  }
  CHECK(ids.size() == 2);  // two jobs, each of its own two ranks
  CHECK(std::filesystem::is_empty(tmp));
}

TEST_CASE("bad world sizes, ranks and master addresses: exit 2 with one line") {
  test::TempDir dir;
  const std::string out = " " + kSmall + " --out " + dir.file("bad.jsonl");
  struct Case {
    std::string env, args, says;
  };
  const Case cases[] = {
      {"", "--world-size 0", "--world-size 0 is outside [1, 64]"},
      {"", "--world-size 65", "--world-size 65 is outside [1, 64]"},
      {"", "--world-size 2 --rendezvous-timeout 0", "--rendezvous-timeout"},
      {"", "--world-size 9", "smaller than the world size 9"},
      {"RANK=2 WORLD_SIZE=2", "", "RANK=2 is outside [0, 1]"},
      {"RANK=-1 WORLD_SIZE=2", "", "RANK=-1 is outside [0, 1]"},
      {"RANK=0 WORLD_SIZE=0", "", "WORLD_SIZE=0 is outside [1, 1024]"},
      {"RANK=0 WORLD_SIZE=5000", "", "WORLD_SIZE=5000 is outside [1, 1024]"},
      {"RANK=x WORLD_SIZE=2", "", "RANK='x' is not a whole number"},
      {"RANK=0", "", "WORLD_SIZE is not set"},
      {"RANK=0 WORLD_SIZE=2 MASTER_ADDR='no such:host'", "", "MASTER_ADDR 'no such:host'"},
      {"RANK=0 WORLD_SIZE=2 MASTER_ADDR=300.1.2.3", "", "not a valid IPv4 address"},
      {"RANK=0 WORLD_SIZE=2 MASTER_ADDR=''", "", "MASTER_ADDR ''"},
      {"RANK=0 WORLD_SIZE=2 MASTER_PORT=70000", "", "MASTER_PORT=70000 is outside"},
      {"RANK=0 WORLD_SIZE=3", "--world-size 2", "disagrees with the launcher's WORLD_SIZE=3"},
      {"", "--world-size 2 --fault recompile-one-rank=2", "the job has ranks 0-1"},
      {"", "--fault recompile-one-rank", "needs a data-parallel run"},
      {"", "--world-size 2 --fault recompile-one-rank=x", "takes a rank in [0, 1023]"},
      {"", "--world-size 2 --dist-backend mpi", "--dist-backend must be gloo or nccl, got 'mpi'"},
      {"RANK=0 WORLD_SIZE=2", "--dist-backend mpi", "--dist-backend must be gloo or nccl"},
      // Here NCCL is either not built (a CPU LibTorch) or has no CUDA device to run on: the
      // launcher says so once, before any rank starts; a launched rank says so before it joins.
      {"", "--world-size 2 --dist-backend nccl", "--dist-backend nccl"},
      {"RANK=0 WORLD_SIZE=2", "--dist-backend nccl", "--dist-backend nccl"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.env);
    CAPTURE(c.args);
    const auto r = c.env.empty() ? test::run_cli("train " + c.args + out)
                                 : test::run_cli_env(c.env, "train " + c.args + out);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "recompdiag: error: "));
    CHECK(contains(r.output, c.says));
    CHECK(lines(r.output) == 1);
  }
  CHECK(!std::filesystem::exists(dir.file("bad.jsonl")));
  CHECK(!std::filesystem::exists(dir.file("bad.rank0.jsonl")));
}

TEST_CASE("a rank that never joins: the others fail within --rendezvous-timeout, one line") {
  test::TempDir dir;
  const std::string port = std::to_string(free_port());
  // Rank 0 waits for a rank 1 that never comes.
  auto t0 = std::chrono::steady_clock::now();
  auto o = test::run_cli_env(
      "RANK=0 WORLD_SIZE=2 MASTER_PORT=" + port,
      "train " + kSmall + " --rendezvous-timeout 2 --out " + dir.file("alone.jsonl"));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(contains(o.output, "rank 0 of 2: rendezvous"));
  CHECK(contains(o.output, "1 of 2 ranks joined"));
  CHECK(lines(o.output) == 1);
  CHECK(took < 30.0);  // bounded by the timeout, not a hang (generous: the machine is shared)

  // Rank 1 finds no store at all: rank 0 never started.
  o = test::run_cli_env(
      "RANK=1 WORLD_SIZE=2 MASTER_PORT=" + port,
      "train " + kSmall + " --rendezvous-timeout 2 --out " + dir.file("alone.jsonl"));
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(contains(o.output, "rank 1 of 2: cannot reach the rendezvous store"));
  CHECK(lines(o.output) == 1);
}

TEST_CASE("compare takes a job's rank files as one run and names rank K's compile") {
  test::TempDir dir;
  // Mutable mode compiles nothing at the switch: rank 1's compile there is the fault alone.
  const std::string common =
      "--mode mutable --epochs 2,2 --steps-per-epoch 6 --batch-size 8 "
      "--hidden 8 --quiet --world-size 2";
  std::filesystem::create_directories(dir.file("a"));
  std::filesystem::create_directories(dir.file("b"));
  auto o = test::run_cli("train " + common + " --out " + dir.file("a/job.jsonl"));
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  o = test::run_cli("train " + common + " --fault recompile-one-rank=1 --out " +
                    dir.file("b/job.jsonl"));
  REQUIRE(o.exit_code == 0);
  const RunFile late = read_run_file(dir.file("b/job.rank1.jsonl"));
  const RunFile other = read_run_file(dir.file("b/job.rank0.jsonl"));
  auto compiles = [](const RunFile& f) {
    return std::count_if(f.events.begin(), f.events.end(),
                         [](const EventRecord& e) { return e.kind == EventKind::kCompile; });
  };
  CHECK(compiles(late) == 2);   // initial, and the fault's at the switch
  CHECK(compiles(other) == 1);  // initial only
  REQUIRE(late.summary.has_value());
  REQUIRE(other.summary.has_value());
  CHECK(late.summary->parameters_digest == other.summary->parameters_digest);

  o = test::run_cli("compare --a " + dir.file("a") + " --b '" + dir.file("b/job.rank*.jsonl") +
                    "' --format json --out " + dir.file("report.json"));
  INFO(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));
  const auto report = nlohmann::json::parse(test::read_text(dir.file("report.json")));
  CHECK(report["runs_a"].size() == 1);  // the job is one run
  REQUIRE(report["job_a"].is_object());
  REQUIRE(report["job_b"].is_object());
  CHECK(report["job_b"]["world_size"] == 2);
  CHECK(report["job_b"]["ranks"].size() == 2);
  // Whether the slow steps at the switch stand out from the noise depends on the machine's load;
  // when a stretch there names a straggler that recompiled, it must be rank 1 (job_test checks the
  // attribution itself on synthetic rank files).
  const int64_t switch_step = 12;
  for (const auto& f : report["job_b"]["stragglers"]) {
    const bool at_switch = f["first_step"].get<int64_t>() <= switch_step &&
                           switch_step <= f["last_step"].get<int64_t>();
    if (at_switch && f["cause"].get<std::string>().rfind("recompiled", 0) == 0) {
      INFO(f["sentence"].get<std::string>());
      CHECK(f["straggler"] == 1);
      CHECK(f["waiters"] == nlohmann::json::array({0}));
    }
  }

  // A job given without one of its ranks is bad input.
  o = test::run_cli("compare --a " + dir.file("a") + " --b " + dir.file("b/job.rank0.jsonl"));
  CHECK(o.exit_code == 2);
  CHECK(contains(o.output, "rank(s) 1 are not given"));
}
