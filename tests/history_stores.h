#pragma once
// The history suites' stores and runs: a fresh store of each kind this run has (an SQLite file
// always, a new PostgreSQL database where RECOMPDIAG_TEST_POSTGRES_URL names a server:
// tests/system/with_postgres.sh starts one), and a run as history keeps it.

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "recompdiag/core/history.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::test {

// A fresh store of each kind this run has: an SQLite file, and a new PostgreSQL database.
struct Stores {
  runner::TempDir dir{"history_store_test-"};
  std::vector<std::string> dbs;
  Stores() {
    dbs.push_back(dir.path() + "/history.db");
    if (const char* url = std::getenv("RECOMPDIAG_TEST_POSTGRES_URL")) {
      static std::atomic<int> n{0};
      const std::string name = "h" + std::to_string(::getpid()) + "_" + std::to_string(n++);
      const std::string create =
          "psql -q '" + std::string(url) + "' -c 'CREATE DATABASE " + name + "' >/dev/null";
      REQUIRE(std::system(create.c_str()) == 0);
      std::string db = url;
      db = db.substr(0, db.rfind('/') + 1) + name;
      dbs.push_back(db);
    }
  }
};

/// A run of `commit` with two phases (phase 2 twice phase 1's median), a compile count per
/// phase, ledger totals and one cause.
inline HistoryRun history_sample_run(const std::string& commit, double median_ms = 4.0) {
  HistoryRun r;
  r.commit = commit;
  r.branch = "main";
  r.path = "/runs/" + commit + ".jsonl";
  r.host = "ci-7";
  r.torch_version = "2.15.0";
  r.mode = "python";
  r.config = R"({"lr":0.01})";
  r.start_time = "2026-12-06T06:00:00Z";
  r.steps = 100;
  for (int phase : {1, 2}) {
    HistoryPhase p;
    p.phase = phase;
    p.steps = 50;
    p.steady_steps = 45;
    p.median_ms = median_ms * phase;
    p.low_ms = p.median_ms * 0.98;
    p.high_ms = p.median_ms * 1.03;
    p.counts = {{"dynamo_compiles", phase}, {"graph_breaks", 0}};
    r.phases.push_back(p);
  }
  r.totals = {{"compiles", 3.0}, {"compile_s", 0.8125}};
  r.causes = {{"guard", "forward (model.py:12)", "L['scale']", "python_number", 2, 30}};
  return r;
}

}  // namespace recompdiag::test
