// The history store, one suite for both kinds: an SQLite file always, and PostgreSQL where
// RECOMPDIAG_TEST_POSTGRES_URL names a server (tests/system/with_postgres.sh starts one and sets
// it; each case gets a fresh database there). Runs read back whole, a commit never overwritten,
// the schema's migration, stores of another kind or version refused, parallel adds that lose
// nothing, and acknowledgements.
#include "recompdiag/runner/history_store.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "history_stores.h"
#include "recompdiag/core/error.h"
#include "recompdiag/runner/process.h"

using namespace recompdiag;
using namespace recompdiag::runner;

using test::Stores;

namespace {
HistoryRun run(const std::string& commit, double median_ms = 4.0) {
  return test::history_sample_run(commit, median_ms);
}
}  // namespace

TEST_CASE("history store: a run reads back whole, in the order added") {
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    auto store = HistoryStore::open(db);
    CHECK(store->schema_version() == HistoryStore::kSchemaVersion);
    HistoryRun labelled = run("b2");
    labelled.labels = {{"job", "hf"}, {"size", "small"}};
    const int64_t first = store->add(run("a1", 4.25));
    CHECK(store->add(labelled) > first);
    const std::vector<HistoryRun> runs = HistoryStore::open(db)->runs();
    REQUIRE(runs.size() == 2);
    const HistoryRun& r = runs[0];
    CHECK(r.commit == "a1");
    CHECK(r.branch == "main");
    CHECK(r.config == R"({"lr":0.01})");
    CHECK(r.steps == 100);
    CHECK_FALSE(r.added.empty());
    REQUIRE(r.phases.size() == 2);
    CHECK(r.phases[1].median_ms == 8.5);  // exactly: doubles travel as %.17g text
    CHECK(r.phases[1].counts.at("dynamo_compiles") == 2);
    CHECK(r.totals.at("compile_s") == 0.8125);
    REQUIRE(r.causes.size() == 1);
    CHECK(r.causes[0].subject == "L['scale']");
    CHECK(r.causes[0].first_step == 30);
    CHECK(runs[1].series_key() == "job=hf,size=small");
    CHECK(store->runs("b2").size() == 1);
    CHECK_THROWS_WITH_AS(store->runs("zz"), doctest::Contains("no run of commit zz"), InputError);
  }
}

TEST_CASE("history store: a commit recorded is never overwritten, and nothing is changed") {
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    auto store = HistoryStore::open(db);
    store->add(run("a1", 4.0));
    CHECK_THROWS_WITH_AS(store->add(run("a1", 9.0)),
                         doctest::Contains("commit a1 is recorded already (run 1, added"),
                         InputError);
    HistoryRun other = run("a1", 9.0);
    other.labels["job"] = "hf";  // another series may have the commit
    store->add(other);
    const std::vector<HistoryRun> runs = store->runs();
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].phases[0].median_ms == 4.0);
    CHECK(runs[0].phases.size() == 2);  // the refused add left no phase behind
  }
}

TEST_CASE("history store: a store of schema 1 is migrated on open, its runs kept") {
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    {
      auto old = HistoryStore::open_at_version(db, 1);
      CHECK(old->schema_version() == 1);
      old->add(run("a1"));
      CHECK(old->runs()[0].causes.empty());  // schema 1 kept no causes
      CHECK_THROWS_WITH_AS(old->acknowledge({"x@a1", "", ""}),
                           doctest::Contains("a store of schema 1 cannot"), InputError);
    }
    auto store = HistoryStore::open(db);
    CHECK(store->schema_version() == 2);
    store->add(run("b2"));
    const std::vector<HistoryRun> runs = store->runs();
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].phases.size() == 2);
    CHECK(runs[0].causes.empty());
    CHECK(runs[1].causes.size() == 1);
  }
}

TEST_CASE("history store: a store of another kind or a newer schema is refused in one line") {
  runner::TempDir dir("history_store_test-");
  const std::string text = dir.path() + "/notes.db";
  std::ofstream(text) << "these are notes, not a database, and they are long enough to tell";
  const std::string refused = text + ": not a history store";
  CHECK_THROWS_WITH_AS(HistoryStore::open(text), doctest::Contains(refused.c_str()), InputError);
  CHECK(std::ifstream(text).good());  // left as it was
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    HistoryStore::open(db)->add(run("a1"));
    // A newer recompdiag's store: its version is refused, its runs untouched.
    const std::string bump = db.find("://") == std::string::npos
                                 ? "sqlite3 '" + db +
                                       "' \"UPDATE recompdiag_meta SET value = '99' WHERE key = "
                                       "'schema_version'\""
                                 : "psql -q '" + db +
                                       "' -c \"UPDATE recompdiag_meta SET value = '99' WHERE key = "
                                       "'schema_version'\" >/dev/null";
    REQUIRE(std::system(bump.c_str()) == 0);
    CHECK_THROWS_WITH_AS(HistoryStore::open(db),
                         doctest::Contains("schema version 99 is newer than this recompdiag's (2)"),
                         InputError);
  }
  const std::string foreign = dir.path() + "/foreign.db";
  REQUIRE(std::system(("sqlite3 '" + foreign + "' 'CREATE TABLE t (x)'").c_str()) == 0);
  CHECK_THROWS_WITH_AS(HistoryStore::open(foreign),
                       doctest::Contains("not a recompdiag history store"), InputError);
  CHECK_THROWS_WITH_AS(
      HistoryStore::open("postgresql://nobody@127.0.0.1:1/none"),
      doctest::Contains("postgresql://nobody@127.0.0.1:1/none: cannot reach the history store"),
      InputError);
}

TEST_CASE("history store: processes adding at once lose nothing") {
  Stores stores;
  constexpr int kProcesses = 8;
  constexpr int kAdds = 10;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    HistoryStore::open(db);  // created before the race: the race of creation is the next case's
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
      const pid_t pid = runner::fork_process("an adder");
      if (pid == 0) {
        int code = 0;
        try {
          auto store = HistoryStore::open(db);
          for (int i = 0; i < kAdds; ++i) {
            store->add(run("p" + std::to_string(p) + "-" + std::to_string(i)));
          }
        } catch (const std::exception& e) {
          std::fprintf(stderr, "adder %d: %s\n", p, e.what());
          code = 1;
        }
        ::_exit(code);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      const int status = runner::wait_process(pid);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    const std::vector<HistoryRun> runs = HistoryStore::open(db)->runs();
    CHECK(runs.size() == kProcesses * kAdds);
    for (const HistoryRun& r : runs) CHECK(r.phases.size() == 2);
  }
}

TEST_CASE("history store: processes creating a new store at once make one") {
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    std::vector<pid_t> children;
    for (int p = 0; p < 4; ++p) {
      const pid_t pid = runner::fork_process("an opener");
      if (pid == 0) {
        try {
          HistoryStore::open(db)->add(run("p" + std::to_string(p)));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "opener %d: %s\n", p, e.what());
          ::_exit(1);
        }
        ::_exit(0);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) CHECK(WEXITSTATUS(runner::wait_process(pid)) == 0);
    CHECK(HistoryStore::open(db)->runs().size() == 4);
  }
}

TEST_CASE("history store: an acknowledgement is kept once") {
  Stores stores;
  for (const std::string& db : stores.dbs) {
    CAPTURE(db);
    auto store = HistoryStore::open(db);
    store->acknowledge({"phase 1 dynamo_compiles@a1", "meant: a new model", ""});
    CHECK_THROWS_WITH_AS(store->acknowledge({"phase 1 dynamo_compiles@a1", "", ""}),
                         doctest::Contains("is acknowledged already"), InputError);
    const std::vector<Acknowledgement> acks = store->acknowledgements();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].note == "meant: a new model");
    CHECK_FALSE(acks[0].at.empty());
  }
}

TEST_CASE("history store: docs/history.md's Grafana query reads a PostgreSQL store's series") {
  Stores stores;
  if (stores.dbs.size() < 2) {
    MESSAGE("no PostgreSQL here (RECOMPDIAG_TEST_POSTGRES_URL): the query is not run");
    return;
  }
  const std::string& db = stores.dbs[1];
  auto store = HistoryStore::open(db);
  HistoryRun labelled = run("b2", 5.0);
  labelled.labels = {{"job", "hf"}};
  store->add(run("a1", 4.0));
  store->add(labelled);
  // The document's first sql block, Grafana's time filter read as true.
  std::ifstream doc(std::string(RECOMPDIAG_SOURCE_DIR) + "/docs/history.md");
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const size_t start = text.find("```sql\n");
  REQUIRE(start != std::string::npos);
  std::string sql = text.substr(start + 7, text.find("```", start + 7) - start - 7);
  const size_t filter = sql.find("$__timeFilter(");
  REQUIRE(filter != std::string::npos);
  sql.replace(filter, sql.find(") AND", filter) + 1 - filter, "TRUE");
  const std::string file = stores.dir.path() + "/grafana.sql";
  std::ofstream(file) << sql;
  const runner::Captured out =
      runner::run_capturing({"/usr/bin/psql", "-At", "-F", "|", db, "-f", file});
  REQUIRE(WEXITSTATUS(out.status) == 0);
  CAPTURE(out.out);
  // Two runs of two phases: four rows, in time order, the labelled run's metric prefixed.
  CHECK(std::count(out.out.begin(), out.out.end(), '\n') == 4);
  CHECK(out.out.find("|phase 1|4\n") != std::string::npos);
  CHECK(out.out.find("|phase 2|8\n") != std::string::npos);
  CHECK(out.out.find("|job=hf: phase 2|10\n") != std::string::npos);
}
