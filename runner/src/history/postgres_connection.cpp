// The history store's SQL over PostgreSQL (libpq): a team's shared store.

#include <stdexcept>

#include "history/sql_connection.h"
#include "recompdiag/core/error.h"

#ifdef RECOMPDIAG_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

namespace recompdiag::runner::detail {

namespace {

// The URL without its password, for messages: postgresql://user:secret@host/db ->
// postgresql://user@host/db.
std::string without_password(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + url.substr(at);
}

}  // namespace

#ifdef RECOMPDIAG_HAVE_POSTGRES

namespace {

// The advisory lock a writing transaction takes: one per store (an arbitrary constant, "rdh").
constexpr const char* kStoreLock = "SELECT pg_advisory_xact_lock(7497800)";

// The first line of libpq's message (it appends details on further lines).
std::string first_line(const char* message) {
  std::string m = message ? message : "";
  const size_t nl = m.find('\n');
  return nl == std::string::npos ? m : m.substr(0, nl);
}

class PostgresConnection : public SqlConnection {
 public:
  explicit PostgresConnection(const std::string& url) : url_(without_password(url)) {
    // A server that does not answer is given 10 s, unless the URL says otherwise (its own
    // connect_timeout, expanded after ours, wins).
    const char* keys[] = {"connect_timeout", "dbname", nullptr};
    const char* values[] = {"10", url.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = first_line(PQerrorMessage(conn_));
      PQfinish(conn_);
      conn_ = nullptr;
      throw InputError(url_ + ": cannot reach the history store: " + why);
    }
    try {
      query("SET client_min_messages = warning");  // no NOTICE lines on stderr
    } catch (...) {
      PQfinish(conn_);  // a constructor that throws runs no destructor
      conn_ = nullptr;
      throw;
    }
  }

  ~PostgresConnection() override { PQfinish(conn_); }

  std::vector<SqlRow> query(const std::string& sql,
                            const std::vector<SqlValue>& params = {}) override {
    std::vector<const char*> values;
    for (const SqlValue& p : params) values.push_back(p ? p->c_str() : nullptr);
    PGresult* res = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      // Copied before PQclear frees the result they point into.
      const char* state_field = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      const std::string state = state_field ? state_field : "";
      const std::string why = first_line(PQresultErrorMessage(res));
      PQclear(res);
      if (state == "23505") throw SqlConflict(why);  // unique_violation
      throw IoError(url_ + ": " + why);
    }
    std::vector<SqlRow> rows;
    for (int r = 0; r < PQntuples(res); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(res); ++c) {
        row.push_back(PQgetisnull(res, r, c) ? std::nullopt
                                             : SqlValue(std::string(PQgetvalue(res, r, c))));
      }
      rows.push_back(std::move(row));
    }
    PQclear(res);
    return rows;
  }

  void begin_writing() override {
    query("BEGIN");
    query(kStoreLock);
  }
  void commit() override { query("COMMIT"); }
  void rollback() noexcept override { PQclear(PQexec(conn_, "ROLLBACK")); }
  const char* serial_primary_key() const override { return "BIGSERIAL PRIMARY KEY"; }

  bool has_table(const std::string& table) override {
    return !query(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_name = $1",
                {table})
                .empty();
  }
  bool has_any_table() override {
    return !query("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()")
                .empty();
  }
  std::string describe() const override { return "PostgreSQL " + url_; }

 private:
  std::string url_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_postgres(const std::string& url) {
  return std::make_unique<PostgresConnection>(url);
}

#else

std::unique_ptr<SqlConnection> open_postgres(const std::string& url) {
  throw InputError(without_password(url) +
                   ": unavailable: this build has no PostgreSQL client (install libpq-dev and "
                   "rebuild)");
}

#endif

}  // namespace recompdiag::runner::detail
