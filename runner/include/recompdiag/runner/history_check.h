#pragma once
/// \file
/// `recompdiag history check`: the change points of every series of a history. The exact counts'
/// changes are found exactly (core/history.h); the step-time medians' by Apache Otava's
/// E-divisive (otava.h), then sized here with an interval. Each change point names its first
/// commit, its series, its size, and for a count the guards and causes that appeared with it.
/// A regression nobody acknowledged (`history ack ID`) fails the check.
///
///     auto store = HistoryStore::open("history.db");
///     const HistoryCheck check = check_history(*store, {});
///     std::cout << history_check_text(check);
///     return check.exit_code();  // 1: an unacknowledged regression

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/history.h"
#include "recompdiag/reports/history_report.h"
#include "recompdiag/runner/history_store.h"
#include "recompdiag/runner/otava.h"

namespace recompdiag::runner {

/// Settings of check_history(). Plain data.
struct HistoryCheckOptions {
  /// Only the runs from this commit's on (`--since ID`).
  std::optional<std::string> since;
  /// How Otava is run, and at what significance.
  OtavaOptions otava;
  /// A step-time level needs this many runs on each side of its change point: a single run off
  /// the rest is an outlier (a machine that jumped for one run), not a change. The newest runs
  /// of a new level wait for a second before they are a change point.
  size_t min_level_runs = 2;
  /// Throws InputError for a bad value: what OtavaOptions::validate() refuses (no interpreter,
  /// Otava's p-value outside (0, 1), a window below 3, a negative magnitude), a level of no runs.
  void validate() const;
};

/// What check_history() found. Owns the runs its series point into: move it, do not copy it.
struct HistoryCheck {
  std::string store;
  std::vector<HistoryRun> runs;
  std::vector<HistorySeries> series;
  std::vector<HistoryChange> changes;  ///< In series order, then commit order.
  std::string otava_version;           ///< Empty when no series had enough runs to ask Otava.
  HistoryCheck() = default;
  HistoryCheck(HistoryCheck&&) = default;
  HistoryCheck& operator=(HistoryCheck&&) = default;
  HistoryCheck(const HistoryCheck&) = delete;
  HistoryCheck& operator=(const HistoryCheck&) = delete;
  /// 1 when a regression is not acknowledged, else 0.
  int exit_code() const;
};

/// Reads the store's runs (from options.since on) and finds every series' change points. Throws
/// InputError for bad options, an unknown --since commit, or an interpreter without Otava when a
/// step-time series needs it.
HistoryCheck check_history(HistoryStore& store, const HistoryCheckOptions& options);

/// The check as the reports take it (the series point into `check`'s runs).
reports::HistoryReport history_report_of(const HistoryCheck& check);

/// The check in Markdown (reports::render_history_markdown()): by commit, those with a
/// regression nobody acknowledged first.
std::string history_check_text(const HistoryCheck& check);

/// The check as JSON: {"type": "history_check", "changes": [...], "exit_code": ...}.
nlohmann::ordered_json history_check_json(const HistoryCheck& check);

}  // namespace recompdiag::runner
