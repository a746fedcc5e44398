#pragma once
// Rank files of a data-parallel job for tests: a rank's file, and a job whose one rank the others
// wait for.

#include <string>
#include <vector>

#include "recompdiag/core/run_io.h"

namespace recompdiag::test {

/// One rank of a job: `steps` steps of 10 ms, of which `wait_ms` in the all-reduce.
inline RunFile rank_file(int rank, int world, const std::string& job, int64_t steps = 100) {
  RunFile f;
  f.path = "job.rank" + std::to_string(rank) + ".jsonl";
  f.header.rank = rank;
  f.header.world_size = world;
  f.header.job_id = job;
  f.header.optimizer = "Adam";
  for (int64_t i = 0; i < steps; ++i) {
    StepRecord s;
    s.step = i;
    s.wall_ms = 10.0 + 0.01 * static_cast<double>((i * 7 + rank) % 5);  // a little spread
    s.loss = 1.0;
    s.head_losses = {1.0, 1.0};
    s.jit = JitStats{};
    s.comm = CommStats{1, 4096, 1.0};
    f.steps.push_back(s);
  }
  f.events.push_back({EventKind::kPhaseStart, 0, 1, "phase 1", {{"phase", 1}}});
  f.events.push_back({EventKind::kCompile, 0, 1, "initial", {{"compile_ms", 80.0}}});
  RunSummary sum;
  sum.steps = steps;
  f.summary = sum;
  return f;
}

/// A 4-rank job in which rank `late` recompiles before step 40 (45 ms, between its steps) and
/// the others wait for it in step 40's and 41's all-reduce.
inline std::vector<RunFile> job_with_straggler(int late) {
  std::vector<RunFile> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_file(r, 4, "j1"));
  RunFile& l = ranks[static_cast<size_t>(late)];
  l.events.push_back(
      {EventKind::kCompile, 40, 1, "fault: recompile-one-rank", {{"compile_ms", 45.0}}});
  l.steps[40].jit->plan_builds = 1;
  const double waits[3] = {41.0, 43.0, 44.0};  // of the waiters, in rank order
  size_t w = 0;
  for (int r = 0; r < 4; ++r) {
    if (r == late) continue;
    const double wait = waits[w++];
    for (int64_t s : {40, 41}) {
      ranks[static_cast<size_t>(r)].steps[static_cast<size_t>(s)].comm->wait_ms = wait / 2 + 1.0;
      ranks[static_cast<size_t>(r)].steps[static_cast<size_t>(s)].wall_ms = 10.0 + wait / 2;
    }
  }
  return ranks;
}

}  // namespace recompdiag::test
