#pragma once
// What the `history` commands share: the store they read and write (--db), and the interpreter
// that runs Apache Otava (--python).

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "recompdiag/runner/otava.h"

namespace recompdiag::runner::cli {

/// The store when --db is not given: a file in the working directory.
inline constexpr char kDefaultHistoryDb[] = "recompdiag-history.db";

/// Adds --db to `cmd`, bound to `db` (which must outlive parsing).
inline void add_db_flag(CLI::App& cmd, std::string& db) {
  db = kDefaultHistoryDb;
  cmd.add_option("--db", db,
                 "The history store: an SQLite file (created when missing), or a team's "
                 "PostgreSQL as a postgresql://USER@HOST/DB URL")
      ->capture_default_str();
}

/// Adds --python to `cmd`, bound to `otava.python`, whose default $RECOMPDIAG_PYTHON gives.
inline void add_python_flag(CLI::App& cmd, OtavaOptions& otava) {
  if (const char* python = std::getenv("RECOMPDIAG_PYTHON")) otava.python = python;
  cmd.add_option("--python", otava.python,
                 "The Python interpreter with Apache Otava (pip install apache-otava), for the "
                 "step-time change points: a path, or a name looked up beside recompdiag, then "
                 "on PATH (default: $RECOMPDIAG_PYTHON, else python3)")
      ->capture_default_str();
}

}  // namespace recompdiag::runner::cli
