// Rank files of a data-parallel job (issue 11): the records round-trip, group into jobs, merge into
// the job's view (slowest rank per step) and name the straggler of each slow stretch.

#include "recompdiag/core/job.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "input_error.h"
#include "job_fixtures.h"
#include "recompdiag/core/analysis.h"
#include "recompdiag/core/straggler.h"
#include "recompdiag/reports/words.h"

using namespace recompdiag;
using recompdiag::test::job_with_straggler;
using recompdiag::test::rank_file;

TEST_CASE("rank header fields, the comm section and the parameters digest round-trip") {
  RunFile f = rank_file(1, 2, "abc", 2);
  f.summary->parameters_digest = "0123456789abcdef";
  std::string text = to_json_line(f.header) + "\n";
  for (const StepRecord& s : f.steps) text += to_json_line(s) + "\n";
  text += to_json_line(*f.summary) + "\n";
  const RunFile back = parse_run_file(text, "rank.jsonl");
  CHECK(back.header.rank == 1);
  CHECK(back.header.world_size == 2);
  CHECK(back.header.job_id == "abc");
  REQUIRE(back.steps.size() == 2);
  REQUIRE(back.steps[0].comm.has_value());
  CHECK(back.steps[0].comm->collectives == 1);
  CHECK(back.steps[0].comm->bytes == 4096);
  CHECK(back.steps[0].comm->wait_ms == 1.0);
  CHECK(back.summary->parameters_digest == "0123456789abcdef");

  // A file from before data-parallel runs: a single process.
  const RunFile old = parse_run_file("{\"type\":\"run\",\"schema\":1}\n", "old.jsonl");
  CHECK(old.header.rank == 0);
  CHECK(old.header.world_size == 1);
  CHECK(!is_rank_file(old));

  const std::string bad = test::input_error(
      [] { parse_run_file("{\"type\":\"run\",\"schema\":1,\"rank\":2,\"world_size\":2}\n", "x"); });
  CHECK(bad.find("rank 2 of world_size 2") != std::string::npos);
}

TEST_CASE("rank files group into jobs; an incomplete or doubled job is refused") {
  RunFile single = rank_file(0, 1, "");
  std::vector<RunFile> files = {rank_file(1, 2, "a"), single, rank_file(0, 2, "a"),
                                rank_file(0, 2, "b"), rank_file(1, 2, "b")};
  const std::vector<RunSet> sets = group_rank_files(files);
  REQUIRE(sets.size() == 3);
  CHECK(sets[0].is_job());
  CHECK(sets[0].ranks[0].header.rank == 0);  // ordered by rank
  CHECK(sets[0].ranks[1].header.rank == 1);
  CHECK(!sets[1].is_job());
  CHECK(sets[2].ranks[0].header.job_id == "b");

  std::string e = test::input_error([] {
    group_rank_files({rank_file(0, 3, "a"), rank_file(2, 3, "a")});
  });
  CHECK(e.find("rank(s) 1 are not given") != std::string::npos);
  e = test::input_error([] { group_rank_files({rank_file(0, 2, "a"), rank_file(0, 2, "a")}); });
  CHECK(e.find("rank 0 of job a is also given") != std::string::npos);
  e = test::input_error([] { group_rank_files({rank_file(0, 2, "a"), rank_file(1, 3, "a")}); });
  CHECK(e.find("disagrees") != std::string::npos);
}

TEST_CASE("the job's step is its slowest rank's; counts add up; one rank's events are named") {
  std::vector<RunFile> ranks = job_with_straggler(1);
  ranks[3].steps.pop_back();  // rank 3 did not complete the last step
  const RunFile job = job_run(ranks);
  REQUIRE(job.steps.size() == 99);
  CHECK(job.steps[40].wall_ms == doctest::Approx(10.0 + 44.0 / 2));
  CHECK(job.steps[40].comm->collectives == 4);
  CHECK(job.steps[40].jit->plan_builds == 1);
  int initial = 0, late = 0;
  for (const EventRecord& e : job.events) {
    initial += e.reason == "initial";
    if (e.reason == "rank 1: fault: recompile-one-rank") {
      ++late;
      CHECK(e.detail["rank"] == 1);
    }
  }
  CHECK(initial == 1);  // every rank compiled at step 0: once in the job
  CHECK(late == 1);
}

TEST_CASE("the straggler of a slow stretch is named with its cause; waiters with their wait") {
  for (int late : {1, 2}) {
    CAPTURE(late);
    const std::vector<RunFile> ranks = job_with_straggler(late);
    const RunAnalysis job = analyze_run(job_run(ranks));
    const JobAnalysis j = analyze_job(ranks, job);
    CHECK(j.world_size == 4);
    REQUIRE(j.ranks.size() == 4);
    CHECK(j.ranks[static_cast<size_t>(late)].compiles == 2);
    CHECK(j.compiles_differ);  // the late rank alone recompiled
    const auto found = std::find_if(j.stragglers.begin(), j.stragglers.end(),
                                    [](const StragglerFinding& f) { return f.first_step == 40; });
    REQUIRE(found != j.stragglers.end());
    CHECK(found->last_step == 41);
    CHECK(found->straggler == late);
    CHECK(found->waiters.size() == 3);
    CHECK(found->wait_min_ms == doctest::Approx(41.0));
    CHECK(found->wait_max_ms == doctest::Approx(44.0));
    const std::string expect = "steps 40-41: rank " + std::to_string(late) +
                               " recompiled (reason \"fault: recompile-one-rank\", 45 ms)";
    CHECK(reports::straggler_sentence(*found).find(expect) == 0);
    CHECK(reports::straggler_sentence(*found).find("waited 41-44 ms in all-reduce") !=
          std::string::npos);
  }
}

TEST_CASE("on a busy machine the rank that alone compiled is named though all were slow") {
  // Rank 1 compiled before step 40 and ranks 0, 2, 3 waited 12 ms for it; but the machine was
  // busy, so every rank's steps 40-41 also took 150 ms more in its own compute: the waits are a
  // small share of the stretch's extra time.
  std::vector<RunFile> ranks = job_with_straggler(1);
  for (RunFile& r : ranks) {
    for (int64_t s : {40, 41}) {
      StepRecord& step = r.steps[static_cast<size_t>(s)];
      if (r.header.rank != 1) step.comm->wait_ms = 7.0;
      step.wall_ms = 160.0 + (r.header.rank != 1 ? 6.0 : 0.0);
    }
  }
  const JobAnalysis j = analyze_job(ranks, analyze_run(job_run(ranks)));
  const auto found = std::find_if(j.stragglers.begin(), j.stragglers.end(),
                                  [](const StragglerFinding& f) { return f.first_step == 40; });
  REQUIRE(found != j.stragglers.end());
  CHECK(found->straggler == 1);
  CHECK(reports::straggler_sentence(*found).find("rank 1 recompiled") != std::string::npos);
  // Without the compile, the same waits are noise: no straggler.
  ranks[1].events.pop_back();
  const JobAnalysis none = analyze_job(ranks, analyze_run(job_run(ranks)));
  const auto same = std::find_if(none.stragglers.begin(), none.stragglers.end(),
                                 [](const StragglerFinding& f) { return f.first_step == 40; });
  REQUIRE(same != none.stragglers.end());
  CHECK(same->straggler == -1);
}

TEST_CASE("ranks slow alike have no straggler") {
  std::vector<RunFile> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(rank_file(r, 2, "j"));
    ranks.back().steps[50].wall_ms = 60.0;  // both slow in their own compute
  }
  const JobAnalysis j = analyze_job(ranks, analyze_run(job_run(ranks)));
  CHECK_FALSE(j.compiles_differ);
  const auto found = std::find_if(j.stragglers.begin(), j.stragglers.end(),
                                  [](const StragglerFinding& f) { return f.first_step == 50; });
  REQUIRE(found != j.stragglers.end());
  CHECK(found->straggler == -1);
  CHECK(reports::straggler_sentence(*found).find("no straggler") != std::string::npos);
}

TEST_CASE("a job's summary says failed when a rank failed, and none when a rank wrote none") {
  std::vector<RunFile> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(rank_file(r, 3, "j2"));
  CHECK(job_run(ranks).summary->status == "completed");
  ranks[2].summary->status = "interrupted";
  CHECK(job_run(ranks).summary->status == "interrupted");
  ranks[1].summary->status = "failed";  // a peer died under it: failed wins
  CHECK(job_run(ranks).summary->status == "failed");
  // The report says so: the failed rank is not finished in the rank table, and the job's
  // analysis warns that it failed.
  const RunAnalysis failed = analyze_run(job_run(ranks));
  CHECK(std::any_of(failed.warnings.begin(), failed.warnings.end(), [](const std::string& w) {
    return w.find("the run failed after 100 steps") != std::string::npos;
  }));
  const JobAnalysis j = analyze_job(ranks, failed);
  REQUIRE(j.ranks.size() == 3);
  CHECK(j.ranks[0].finished);
  CHECK(!j.ranks[1].finished);  // failed
  CHECK(j.ranks[2].finished);   // interrupted, but whole
  ranks[2].summary.reset();     // the rank that died wrote no summary: the job did not finish
  CHECK(!job_run(ranks).summary.has_value());
}
