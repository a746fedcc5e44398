#pragma once
/// \file
/// A run history as one self-contained HTML page (`recompdiag history report`): each series over
/// the commits with its change points marked and the levels between them, the count changes
/// with the causes that came with them, and links to the reports of the runs at each change.
///
///     HistoryReport r{store.describe(), check.series, check.changes, "0.8.0", links};
///     write_file_atomically("history.html", [&](std::ostream& out) { render_history_html(r, out); });

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "recompdiag/core/history.h"

namespace recompdiag::reports {

/// What the page shows. Plain data; the series point into runs the caller keeps.
struct HistoryReport {
  std::string store;                   ///< HistoryStore::describe().
  std::vector<HistorySeries> series;   ///< history_series().
  std::vector<HistoryChange> changes;  ///< A check's.
  std::string otava_version;           ///< Empty: Otava was not asked.
  size_t runs = 0;                     ///< The runs the check read.
  /// A run's id -> the link to its report (relative to the page), for the runs that have one.
  std::map<int64_t, std::string> run_links;
};

/// Writes the page: the change points by commit (regressions nobody acknowledged first), each
/// commit's causes once; then every step-time series and every count series that changed, each
/// a chart over the commits.
void render_history_html(const HistoryReport& report, std::ostream& out);

/// The same in Markdown (`history check`'s output): a headline with the gate's answer, then a
/// paragraph per commit, those with a regression nobody acknowledged first: each change point
/// with its size, the causes that came with them (three, then how many more), how to ack it.
std::string render_history_markdown(const HistoryReport& report);

/// The commits that have change points, those with a regression nobody acknowledged first, each
/// group in the order of `changes`.
std::vector<std::string> history_change_commits(const std::vector<HistoryChange>& changes);

/// The causes that came with the change points of `commit`, each once (by HistoryCause::key()).
std::vector<const HistoryCause*> history_commit_causes(const std::vector<HistoryChange>& changes,
                                                       const std::string& commit);

/// A cause in words: "guard L['scale'] failed on forward (model.py:12): a Python float ...;
/// fix: ... (3x)", or "a compile: phase 2: loss weights ... (1x)".
std::string history_cause_words(const HistoryCause& cause);

}  // namespace recompdiag::reports
