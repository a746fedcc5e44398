// The history store: its schema and migrations, and runs added and read in SQL both SQLite and
// PostgreSQL take.

#include "recompdiag/runner/history_store.h"

#include <cstdio>
#include <functional>
#include <map>

#include "history/sql_connection.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/this_host.h"

namespace recompdiag::runner {

namespace {

using detail::SqlConflict;
using detail::SqlConnection;
using detail::SqlRow;
using detail::SqlValue;

// What the meta table says of a store of ours.
constexpr const char* kKind = "recompdiag history";

// Migration k takes a store from schema k - 1 to k. Version 1 kept runs with their phases and
// counts; version 2 added the compile ledger's totals, the recompiles' causes and the
// acknowledgements of change points.
std::vector<std::string> migration(int version, const SqlConnection& c) {
  const std::string serial = c.serial_primary_key();
  if (version == 1) {
    return {
        "CREATE TABLE recompdiag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE runs (id " + serial +
            ", commit_id TEXT NOT NULL, branch TEXT NOT NULL, labels TEXT NOT NULL, path TEXT "
            "NOT NULL, host TEXT NOT NULL, torch_version TEXT NOT NULL, mode TEXT NOT NULL, "
            "config TEXT NOT NULL, start_time TEXT NOT NULL, added TEXT NOT NULL, steps BIGINT "
            "NOT NULL, UNIQUE (commit_id, labels))",
        "CREATE TABLE phases (run_id BIGINT NOT NULL REFERENCES runs(id), phase INTEGER NOT "
        "NULL, steps BIGINT NOT NULL, steady_steps BIGINT NOT NULL, median_ms DOUBLE PRECISION "
        "NOT NULL, low_ms DOUBLE PRECISION NOT NULL, high_ms DOUBLE PRECISION NOT NULL, "
        "PRIMARY KEY (run_id, phase))",
        "CREATE TABLE counts (run_id BIGINT NOT NULL REFERENCES runs(id), phase INTEGER NOT "
        "NULL, name TEXT NOT NULL, value BIGINT NOT NULL, PRIMARY KEY (run_id, phase, name))",
        "INSERT INTO recompdiag_meta (key, value) VALUES ('kind', '" + std::string(kKind) +
            "'), ('schema_version', '1')",
    };
  }
  if (version == 2) {
    return {
        "CREATE TABLE totals (run_id BIGINT NOT NULL REFERENCES runs(id), name TEXT NOT NULL, "
        "value DOUBLE PRECISION NOT NULL, PRIMARY KEY (run_id, name))",
        "CREATE TABLE causes (run_id BIGINT NOT NULL REFERENCES runs(id), kind TEXT NOT NULL, "
        "frame TEXT NOT NULL, subject TEXT NOT NULL, cause TEXT NOT NULL, count BIGINT NOT NULL, "
        "first_step BIGINT NOT NULL)",
        "CREATE INDEX causes_by_run ON causes (run_id)",
        "CREATE TABLE acknowledgements (change_id TEXT PRIMARY KEY, note TEXT NOT NULL, at TEXT "
        "NOT NULL)",
    };
  }
  throw std::logic_error("no migration to schema " + std::to_string(version));
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string labels_text(const std::map<std::string, std::string>& labels) {
  HistoryRun r;
  r.labels = labels;
  return r.series_key();
}

std::map<std::string, std::string> labels_of(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

const std::string& text(const SqlRow& row, size_t i) {
  static const std::string empty;
  return row.at(i) ? *row[i] : empty;
}
int64_t integer(const SqlRow& row, size_t i) { return std::stoll(text(row, i)); }
double real(const SqlRow& row, size_t i) { return std::stod(text(row, i)); }

class Store : public HistoryStore {
 public:
  Store(std::unique_ptr<SqlConnection> c, int target) : c_(std::move(c)) { migrate(target); }

  int schema_version() override { return version_; }

  int64_t add(const HistoryRun& run) override {
    if (run.commit.empty()) throw InputError("a run's commit must not be empty");
    const std::string labels = labels_text(run.labels);
    try {
      return add_run(run, labels);
    } catch (const SqlConflict&) {
      // Asked after the rollback: PostgreSQL answers nothing inside a failed transaction.
      throw InputError(already_recorded(run.commit, labels));
    }
  }

  std::vector<HistoryRun> runs(const std::optional<std::string>& since) override {
    int64_t from = 0;
    if (since) {
      const auto rows = c_->query("SELECT min(id) FROM runs WHERE commit_id = $1", {*since});
      if (rows.empty() || !rows[0][0]) {
        throw InputError(describe() + ": no run of commit " + *since + " is recorded");
      }
      from = integer(rows[0], 0);
    }
    const std::vector<SqlValue> at = {std::to_string(from)};
    std::vector<HistoryRun> out;
    std::map<int64_t, size_t> index;
    for (const SqlRow& r :
         c_->query("SELECT id, commit_id, branch, labels, path, host, torch_version, mode, config, "
                   "start_time, added, steps FROM runs WHERE id >= $1 ORDER BY id",
                   at)) {
      HistoryRun run;
      run.id = integer(r, 0);
      run.commit = text(r, 1);
      run.branch = text(r, 2);
      run.labels = labels_of(text(r, 3));
      run.path = text(r, 4);
      run.host = text(r, 5);
      run.torch_version = text(r, 6);
      run.mode = text(r, 7);
      run.config = text(r, 8);
      run.start_time = text(r, 9);
      run.added = text(r, 10);
      run.steps = integer(r, 11);
      index[run.id] = out.size();
      out.push_back(std::move(run));
    }
    const auto run_of = [&](const SqlRow& r) -> HistoryRun& {
      return out[index.at(integer(r, 0))];
    };
    for (const SqlRow& r : c_->query(
             "SELECT run_id, phase, steps, steady_steps, median_ms, low_ms, high_ms FROM phases "
             "WHERE run_id >= $1 ORDER BY run_id, phase",
             at)) {
      HistoryPhase p;
      p.phase = static_cast<int>(integer(r, 1));
      p.steps = integer(r, 2);
      p.steady_steps = integer(r, 3);
      p.median_ms = real(r, 4);
      p.low_ms = real(r, 5);
      p.high_ms = real(r, 6);
      run_of(r).phases.push_back(std::move(p));
    }
    for (const SqlRow& r :
         c_->query("SELECT run_id, phase, name, value FROM counts WHERE run_id >= $1", at)) {
      for (HistoryPhase& p : run_of(r).phases) {
        if (p.phase == integer(r, 1)) p.counts[text(r, 2)] = integer(r, 3);
      }
    }
    if (version_ >= 2) {
      for (const SqlRow& r :
           c_->query("SELECT run_id, name, value FROM totals WHERE run_id >= $1", at)) {
        run_of(r).totals[text(r, 1)] = real(r, 2);
      }
      for (const SqlRow& r : c_->query(
               "SELECT run_id, kind, frame, subject, cause, count, first_step FROM causes WHERE "
               "run_id >= $1 ORDER BY run_id",
               at)) {
        run_of(r).causes.push_back(
            {text(r, 1), text(r, 2), text(r, 3), text(r, 4), integer(r, 5), integer(r, 6)});
      }
    }
    return out;
  }

  void acknowledge(const Acknowledgement& ack) override {
    require_version(2, "acknowledge a change point");
    in_transaction<int>([&] {
      try {
        c_->query("INSERT INTO acknowledgements (change_id, note, at) VALUES ($1, $2, $3)",
                  {ack.change_id, ack.note, ack.at.empty() ? utc_now_iso() : ack.at});
      } catch (const SqlConflict&) {
        throw InputError(describe() + ": change point " + ack.change_id +
                         " is acknowledged already");
      }
      return 0;
    });
  }

  std::vector<Acknowledgement> acknowledgements() override {
    if (version_ < 2) return {};
    std::vector<Acknowledgement> out;
    for (const SqlRow& r :
         c_->query("SELECT change_id, note, at FROM acknowledgements ORDER BY at, change_id")) {
      out.push_back({text(r, 0), text(r, 1), text(r, 2)});
    }
    return out;
  }

  std::string describe() const override { return c_->describe(); }

 private:
  // The add itself, in one transaction. Throws SqlConflict when the commit and labels are
  // recorded.
  int64_t add_run(const HistoryRun& run, const std::string& labels) {
    return in_transaction<int64_t>([&] {
      const std::vector<SqlRow> id = c_->query(
          "INSERT INTO runs (commit_id, branch, labels, path, host, torch_version, mode, config, "
          "start_time, added, steps) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
          "RETURNING id",
          {run.commit, run.branch, labels, run.path, run.host, run.torch_version, run.mode,
           run.config, run.start_time, utc_now_iso(), std::to_string(run.steps)});
      const std::string run_id = text(id.at(0), 0);
      for (const HistoryPhase& p : run.phases) {
        const std::string phase = std::to_string(p.phase);
        c_->query(
            "INSERT INTO phases (run_id, phase, steps, steady_steps, median_ms, low_ms, high_ms) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            {run_id, phase, std::to_string(p.steps), std::to_string(p.steady_steps),
             number(p.median_ms), number(p.low_ms), number(p.high_ms)});
        for (const auto& [name, value] : p.counts) {
          c_->query("INSERT INTO counts (run_id, phase, name, value) VALUES ($1, $2, $3, $4)",
                    {run_id, phase, name, std::to_string(value)});
        }
      }
      if (version_ >= 2) {
        for (const auto& [name, value] : run.totals) {
          c_->query("INSERT INTO totals (run_id, name, value) VALUES ($1, $2, $3)",
                    {run_id, name, number(value)});
        }
        for (const HistoryCause& cause : run.causes) {
          c_->query(
              "INSERT INTO causes (run_id, kind, frame, subject, cause, count, first_step) "
              "VALUES ($1, $2, $3, $4, $5, $6, $7)",
              {run_id, cause.kind, cause.frame, cause.subject, cause.cause,
               std::to_string(cause.count), std::to_string(cause.first_step)});
        }
      }
      return std::stoll(run_id);
    });
  }

  template <class T>
  T in_transaction(const std::function<T()>& work) {
    c_->begin_writing();
    try {
      T result = work();
      c_->commit();
      return result;
    } catch (...) {
      c_->rollback();
      throw;
    }
  }

  // The schema version the meta table says; 0 for an empty store. Throws InputError for a
  // database that is someone else's.
  int read_version() {
    // Any table first, ours second: another process may create the schema in between (in one
    // transaction, so our meta table appears with the rest), and tables are never dropped.
    const bool any_table = c_->has_any_table();
    if (!c_->has_table("recompdiag_meta")) {
      if (any_table) {
        throw InputError(describe() +
                         ": not a recompdiag history store (it has tables of its "
                         "own and no recompdiag_meta)");
      }
      return 0;
    }
    std::map<std::string, std::string> meta;
    for (const SqlRow& r : c_->query("SELECT key, value FROM recompdiag_meta")) {
      meta[text(r, 0)] = text(r, 1);
    }
    if (meta["kind"] != kKind) {
      throw InputError(describe() + ": not a recompdiag history store (its kind is '" +
                       meta["kind"] + "')");
    }
    try {
      return std::stoi(meta["schema_version"]);
    } catch (const std::exception&) {
      throw InputError(describe() + ": its schema_version '" + meta["schema_version"] +
                       "' is not a number");
    }
  }

  // Brings the store to `target`, one migration a transaction, under the store's write lock so
  // that processes opening a new store at once do not both create it.
  void migrate(int target) {
    version_ = read_version();
    if (version_ > kSchemaVersion) {
      throw InputError(describe() + ": schema version " + std::to_string(version_) +
                       " is newer than this recompdiag's (" + std::to_string(kSchemaVersion) +
                       "): upgrade recompdiag to read it");
    }
    while (version_ < target) {
      in_transaction<int>([&] {
        version_ = read_version();  // another process may have migrated it meanwhile
        if (version_ >= target) return 0;
        for (const std::string& sql : migration(version_ + 1, *c_)) c_->query(sql);
        ++version_;
        c_->query("UPDATE recompdiag_meta SET value = $1 WHERE key = 'schema_version'",
                  {std::to_string(version_)});
        return 0;
      });
    }
  }

  void require_version(int version, const std::string& what) {
    if (version_ < version) {
      throw InputError(describe() + ": a store of schema " + std::to_string(version_) + " cannot " +
                       what);
    }
  }

  std::string already_recorded(const std::string& commit, const std::string& labels) {
    const auto rows = c_->query("SELECT id, added FROM runs WHERE commit_id = $1 AND labels = $2",
                                {commit, labels});
    std::string where = rows.empty()
                            ? std::string()
                            : " (run " + text(rows[0], 0) + ", added " + text(rows[0], 1) + ")";
    return describe() + ": commit " + commit + (labels.empty() ? "" : " with labels " + labels) +
           " is recorded already" + where + "; nothing was changed";
  }

  std::unique_ptr<SqlConnection> c_;
  int version_ = 0;
};

std::unique_ptr<SqlConnection> connect(const std::string& db) {
  if (db.empty()) throw InputError("--db must name a store: a file, or a postgresql:// URL");
  return is_postgres_url(db) ? detail::open_postgres(db) : detail::open_sqlite(db);
}

}  // namespace

bool is_postgres_url(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

std::unique_ptr<HistoryStore> HistoryStore::open(const std::string& db) {
  return std::make_unique<Store>(connect(db), kSchemaVersion);
}

std::unique_ptr<HistoryStore> HistoryStore::open_at_version(const std::string& db, int version) {
  if (version < 1 || version > kSchemaVersion) {
    throw InputError("schema version must be in [1, " + std::to_string(kSchemaVersion) + "]");
  }
  return std::make_unique<Store>(connect(db), version);
}

}  // namespace recompdiag::runner
