#pragma once
// The little of SQL the history store needs, over SQLite and PostgreSQL alike: statements with
// positional parameters ($1, $2, ... in both), rows of text (NULL as nullopt), transactions.
// history_store.cpp writes its SQL once against it.

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace recompdiag::runner::detail {

using SqlValue = std::optional<std::string>;  // nullopt: NULL
using SqlRow = std::vector<SqlValue>;

/// A statement failed because a UNIQUE or PRIMARY KEY constraint was violated.
class SqlConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  /// Runs `sql` with `params` bound to $1, $2, ...; returns the rows it yields. Throws
  /// SqlConflict for a violated unique constraint, IoError for any other failure.
  virtual std::vector<SqlRow> query(const std::string& sql,
                                    const std::vector<SqlValue>& params = {}) = 0;
  /// Starts a transaction that writes: in SQLite it takes the write lock at once (waiting for
  /// another writer), in PostgreSQL an advisory lock of the store, so that a check-then-write
  /// (the schema's migration) is not raced.
  virtual void begin_writing() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  /// The SQL type of an auto-incremented primary key: SQLite's and PostgreSQL's differ.
  virtual const char* serial_primary_key() const = 0;
  /// Whether `table` exists.
  virtual bool has_table(const std::string& table) = 0;
  /// Whether the store has any table at all (a database that is someone else's).
  virtual bool has_any_table() = 0;
  virtual std::string describe() const = 0;
};

/// Opens an SQLite file, creating it. Throws InputError when it is not a database (or the build
/// has no SQLite), IoError when it cannot be opened.
std::unique_ptr<SqlConnection> open_sqlite(const std::string& path);

/// Connects to PostgreSQL at `url`. Throws InputError (one line, no password) when the server
/// cannot be reached or the build has no libpq.
std::unique_ptr<SqlConnection> open_postgres(const std::string& url);

}  // namespace recompdiag::runner::detail
