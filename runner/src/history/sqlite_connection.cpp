// The history store's SQL over an SQLite file: WAL, a long busy timeout, IMMEDIATE transactions.

#include <chrono>
#include <stdexcept>
#include <thread>

#include "history/sql_connection.h"
#include "recompdiag/core/error.h"

#ifdef RECOMPDIAG_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace recompdiag::runner::detail {

#ifdef RECOMPDIAG_HAVE_SQLITE

namespace {

// How long a writer waits for another process's transaction: parallel CI jobs add at once.
constexpr int kBusyTimeoutMs = 120000;

class SqliteConnection : public SqlConnection {
 public:
  explicit SqliteConnection(const std::string& path) : path_(path) {
    const int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError(path + ": cannot open the history store: " + why);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    try {
      // Reading the schema tells a database from another file ("file is not a database").
      query("SELECT count(*) FROM sqlite_master");
    } catch (const IoError& e) {
      const bool not_a_database = sqlite3_errcode(db_) == SQLITE_NOTADB;
      sqlite3_close(db_);
      db_ = nullptr;
      if (not_a_database) throw InputError(path + ": not a history store (" + e.what() + ")");
      throw;
    }
    use_wal();
    query("PRAGMA foreign_keys=ON");
  }

  ~SqliteConnection() override { sqlite3_close(db_); }

  std::vector<SqlRow> query(const std::string& sql,
                            const std::vector<SqlValue>& params = {}) override {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) fail(sql);
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      const int rc = params[i]
                         ? sqlite3_bind_text(stmt, index, params[i]->data(),
                                             static_cast<int>(params[i]->size()), SQLITE_TRANSIENT)
                         : sqlite3_bind_null(stmt, index);
      if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        fail(sql);
      }
    }
    std::vector<SqlRow> rows;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        const int extended = sqlite3_extended_errcode(db_);
        const std::string why = sqlite3_errmsg(db_);
        sqlite3_finalize(stmt);
        if (extended == SQLITE_CONSTRAINT_UNIQUE || extended == SQLITE_CONSTRAINT_PRIMARYKEY) {
          throw SqlConflict(why);
        }
        throw IoError(path_ + ": " + why);
      }
      SqlRow row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row.push_back(text ? SqlValue(reinterpret_cast<const char*>(text)) : std::nullopt);
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return rows;
  }

  void begin_writing() override { query("BEGIN IMMEDIATE"); }
  void commit() override { query("COMMIT"); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  const char* serial_primary_key() const override { return "INTEGER PRIMARY KEY AUTOINCREMENT"; }

  bool has_table(const std::string& table) override {
    return !query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1", {table})
                .empty();
  }
  bool has_any_table() override {
    return !query("SELECT 1 FROM sqlite_master WHERE type = 'table'").empty();
  }
  std::string describe() const override { return "SQLite file " + path_; }

 private:
  // Readers do not wait for a writer in WAL mode. Switching to it takes the file's exclusive
  // lock, which SQLite refuses at once (no busy wait) while other processes open the same new
  // store: retried until the busy timeout.
  void use_wal() {
    for (int waited_ms = 0;; waited_ms += 10) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return;
      if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited_ms >= kBusyTimeoutMs) {
        const std::string why = sqlite3_errmsg(db_);
        sqlite3_close(db_);
        db_ = nullptr;
        throw IoError(path_ + ": cannot use write-ahead logging: " + why);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  [[noreturn]] void fail(const std::string& sql) {
    throw IoError(path_ + ": " + sqlite3_errmsg(db_) + " (in: " + sql.substr(0, 60) + ")");
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const std::string& path) {
  return std::make_unique<SqliteConnection>(path);
}

#else

std::unique_ptr<SqlConnection> open_sqlite(const std::string& path) {
  throw InputError(path +
                   ": unavailable: this build has no SQLite (install libsqlite3-dev and "
                   "rebuild)");
}

#endif

}  // namespace recompdiag::runner::detail
