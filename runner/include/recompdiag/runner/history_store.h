#pragma once
/// \file
/// Where run history is kept: an SQLite file (embedded, no server: the default) or a team's
/// PostgreSQL (a `postgresql://` URL), with one versioned schema and its migrations, the same
/// for both. A run is added in one transaction, so that parallel CI jobs adding at once lose
/// nothing and a process killed in the middle of an add leaves the store as it was.
///
///     auto store = HistoryStore::open("history.db");          // or "postgresql://ci@db/perf"
///     HistoryRun run = history_run(analysis);
///     run.commit = "9f2c1e0";
///     store->add(run);                                         // InputError: commit recorded
///     for (const HistoryRun& r : store->runs()) { ... }

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/history.h"

namespace recompdiag::runner {

/// An acknowledged change point (`history ack ID`): known, and no longer failing a check.
struct Acknowledgement {
  std::string change_id;
  std::string note;
  std::string at;  ///< ISO 8601 UTC.
};

/// A store of run history. Not thread-safe: one per thread; processes may share a store.
class HistoryStore {
 public:
  /// The schema version this build writes; an older store is migrated on open, a newer one
  /// refused.
  static constexpr int kSchemaVersion = 2;

  /// Opens (creating and migrating as needed) the store `db` names: a file path (SQLite), or a
  /// `postgresql://` / `postgres://` URL (libpq's). Throws InputError (one line) for a store of
  /// another kind or a newer schema, an unreachable server, a file that is not a database, or a
  /// build without that store's client library.
  static std::unique_ptr<HistoryStore> open(const std::string& db);

  /// Opens the store without migrating it past `version` (tests of the migrations).
  static std::unique_ptr<HistoryStore> open_at_version(const std::string& db, int version);

  virtual ~HistoryStore() = default;

  /// The schema version the store is at.
  virtual int schema_version() = 0;

  /// Adds `run` in one transaction and returns its id. Throws InputError when a run of the same
  /// commit and labels is recorded (never overwritten), IoError when the store fails.
  virtual int64_t add(const HistoryRun& run) = 0;

  /// Every run, in the order they were added (commit order), with their phases and causes; from
  /// the run of commit `since` on when given (InputError when no run has it).
  virtual std::vector<HistoryRun> runs(const std::optional<std::string>& since = std::nullopt) = 0;

  /// Records `change_id` as acknowledged. Throws InputError when it is acknowledged already.
  virtual void acknowledge(const Acknowledgement& ack) = 0;

  /// Every acknowledgement, oldest first.
  virtual std::vector<Acknowledgement> acknowledgements() = 0;

  /// "SQLite file history.db", "PostgreSQL ci@db/perf": for messages (no password).
  virtual std::string describe() const = 0;
};

/// Whether `db` names a PostgreSQL store (a postgresql:// or postgres:// URL).
bool is_postgres_url(const std::string& db);

}  // namespace recompdiag::runner
