// `history check` over each store: Otava's step-time change points sized, the counts' found
// exactly, acknowledgements honoured, and an interpreter without Otava refused in one line.
// Otava runs where RECOMPDIAG_PYTHON names an interpreter that has it (CTest sets it from
// scripts/setup --all's environment).
#include "recompdiag/runner/history_check.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "history_stores.h"
#include "recompdiag/core/error.h"
#include "recompdiag/runner/otava.h"

using namespace recompdiag;
using namespace recompdiag::runner;

namespace {

// 16 commits: phase 1's median about 4 ms (a deterministic 2% jitter), 5 ms from commit c10 on;
// dynamo_compiles 1 until c12, then 3, with a new guard on L['lr'].
void fill(HistoryStore& store) {
  for (int i = 0; i < 16; ++i) {
    const double jitter = 1.0 + 0.02 * ((i * 7) % 5 - 2) / 2.0;
    HistoryRun r =
        test::history_sample_run("c" + std::to_string(i), (i >= 10 ? 5.0 : 4.0) * jitter);
    if (i >= 12) {
      r.phases[0].counts["dynamo_compiles"] = 3;
      r.causes.push_back({"guard", "step (train.py:40)", "L['lr']", "python_number", 2, 20});
    }
    store.add(r);
  }
}

}  // namespace

TEST_CASE("history check: Otava's step-time change point and the exact count change") {
  const char* python = std::getenv("RECOMPDIAG_PYTHON");
  test::Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    auto store = HistoryStore::open(db);
    fill(*store);
    HistoryCheckOptions o;
    if (!python) {
      o.otava.python = "/nonexistent/python3";
      CHECK_THROWS_WITH_AS(check_history(*store, o), doctest::Contains("cannot run"), InputError);
      MESSAGE("RECOMPDIAG_PYTHON is not set: Otava's change points are not checked");
      continue;
    }
    o.otava.python = python;
    const HistoryCheck check = check_history(*store, o);
    CHECK(check.runs.size() == 16);
    CHECK_FALSE(check.otava_version.empty());
    CHECK(check.exit_code() == 1);
    std::vector<std::string> ids;
    for (const HistoryChange& c : check.changes) ids.push_back(c.change.id);
    CAPTURE(ids);
    // Each phase's median moved at c10; phase 1's compiles at c12, with the guard on L['lr'].
    REQUIRE(check.changes.size() == 3);
    const HistoryChange& time = check.changes[0];
    CHECK(time.time);
    CHECK(time.change.id == "phase 1 steady median ms@c10");
    CHECK(time.change.regression);
    CHECK(time.change.ratio == doctest::Approx(1.25).epsilon(0.02));
    CHECK(time.change.low > 1.15);
    CHECK(time.change.high < 1.35);
    const HistoryChange& count = check.changes[1];
    CHECK_FALSE(count.time);
    CHECK(count.change.id == "phase 1 dynamo_compiles@c12");
    REQUIRE(count.change.new_causes.size() == 1);
    CHECK(count.change.new_causes[0].subject == "L['lr']");
    CHECK(check.changes[2].change.id == "phase 2 steady median ms@c10");
    const std::string text = history_check_text(check);
    CHECK(text.find("**Commit `c12`**: 1 change point, a regression nobody acknowledged\n"
                    "- **regression** in phase 1 dynamo_compiles: 1 -> 3") != std::string::npos);
    CHECK(text.find("`recompdiag history ack --commit c10`") != std::string::npos);
    CHECK(text.find("guard L['lr'] failed on step (train.py:40)") != std::string::npos);
    // Acknowledged, they no longer fail the check; --since leaves the older runs out.
    for (const HistoryChange& c : check.changes) store->acknowledge({c.change.id, "known", ""});
    const HistoryCheck acked = check_history(*store, o);
    CHECK(acked.exit_code() == 0);
    CHECK(acked.changes.size() == 3);
    o.since = "c13";
    const HistoryCheck recent = check_history(*store, o);
    CHECK(recent.runs.size() == 3);
    CHECK(recent.changes.empty());
    o.since = "c99";
    CHECK_THROWS_WITH_AS(check_history(*store, o), doctest::Contains("no run of commit c99"),
                         InputError);
  }
}

TEST_CASE("history check: an interpreter without Otava is refused in one line") {
  test::Stores stores;
  auto store = HistoryStore::open(stores.dbs[0]);
  fill(*store);
  HistoryCheckOptions o;
  o.otava.python = "/bin/sh";  // runs, but is no Python with Otava
  CHECK_THROWS_WITH_AS(check_history(*store, o), doctest::Contains("printed no answer"),
                       InputError);
  o.otava.python = "nothing-here-recompdiag";
  CHECK_THROWS_WITH_AS(check_history(*store, o), doctest::Contains("not found on PATH"),
                       InputError);
  o.otava.max_pvalue = 1.5;
  CHECK_THROWS_WITH_AS(check_history(*store, o),
                       doctest::Contains("--max-pvalue must be in (0, 1)"), InputError);
}

TEST_CASE("OtavaOptions: validate() names the flag; Otava is not asked for bad options") {
  OtavaOptions o;
  CHECK_NOTHROW(o.validate());
  o.python = "";
  CHECK_THROWS_WITH_AS(o.validate(), "--python must name an interpreter", InputError);
  o = {};
  o.window_len = 2;
  CHECK_THROWS_WITH_AS(o.validate(), "--window must be at least 3 runs, got 2", InputError);
  o = {};
  o.min_magnitude = -0.1;
  // Refused before the interpreter is looked for (this one does not exist).
  o.python = "nothing-here-recompdiag";
  CHECK_THROWS_WITH_AS(otava_change_points({{1.0, 2.0, 3.0}}, o),
                       "OtavaOptions::min_magnitude must be >= 0, got -0.1", InputError);
}
