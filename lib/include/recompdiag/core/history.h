#pragma once
/// \file
/// Run history: what a store keeps of each run (per phase its steady median with an interval, its
/// step counts and the exact counts; the compile ledger's totals; the causes of the recompiles
/// with their frames; where and on what it ran), the series a history makes of them, and the
/// change points of the exact counts, found exactly: a count needs no statistics. The step-time
/// series' change points come from Apache Otava's E-divisive (runner/otava.h); sizing them is
/// here. Pure; no I/O, no LibTorch.
///
///     HistoryRun run = history_run(analyze_run(read_columnar_run("run.jsonl")));
///     run.commit = "9f2c1e0";
///     store.add(run);  // runner/history_store.h
///     for (const HistorySeries& s : history_series(store.runs())) { ... }

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace recompdiag {

struct RunAnalysis;

/// One phase of a run as history keeps it.
struct HistoryPhase {
  int phase = 1;
  int64_t steps = 0;         ///< Every step of the phase.
  int64_t steady_steps = 0;  ///< Warm-up excluded: what the median is of.
  double median_ms = 0.0;    ///< The steady median step time.
  /// The median's distribution-free 95% interval (order statistics of the steady steps, as if
  /// they were independent: steps that drift together make it too narrow); the median itself
  /// with fewer than 6 steady steps.
  double low_ms = 0.0;
  double high_ms = 0.0;
  /// The exact counts of the phase, as `--fail-on` names them (history_count_names()); a count
  /// the run did not measure is absent, never zero.
  std::map<std::string, int64_t> counts;
};

/// A cause of recompiles in a run: a torch.compile frame with the guard that failed on it, or
/// another compiler's compiles with their reason.
struct HistoryCause {
  std::string kind;     ///< "guard" (torch.compile) or "compile" (TorchScript's, others').
  std::string frame;    ///< "forward (model.py:12)"; the compiler for kind "compile" (or "").
  std::string subject;  ///< The guard's subject (guard_subject()), or the compile's reason.
  std::string cause;    ///< The known cause's key (recompile_cause.h), or empty.
  int64_t count = 0;    ///< Recompiles (compiles) it accounts for.
  int64_t first_step = 0;
  /// "guard|forward (model.py:12)|L['scale']": what a history compares between commits.
  std::string key() const;
};

/// One run as history keeps it: its identity in the history (the commit it measured, the branch,
/// labels that say which series it belongs to), where its run file is (not its steps), where and
/// on what it ran, and what it measured.
struct HistoryRun {
  int64_t id = 0;  ///< The store's; 0 before it is stored.
  std::string commit;
  std::string branch;
  std::map<std::string, std::string> labels;  ///< `--label job=hf`: one series per label set.
  std::string path;                           ///< The run file's, absolute.
  std::string host;
  std::string torch_version;
  std::string mode;
  std::string config;      ///< The run header's config, JSON.
  std::string start_time;  ///< The run's, ISO 8601 UTC.
  std::string added;       ///< When the store got it, ISO 8601 UTC.
  int64_t steps = 0;
  std::vector<HistoryPhase> phases;
  /// The compile ledger's totals and torch.compile's findings over the run: "compiles",
  /// "recompiles", "compile_s", "graph_breaks", "eager_calls", "fx_cache_hits",
  /// "fx_cache_misses", "aot_cache_hits", "aot_cache_misses" (history_totals() lists them).
  std::map<std::string, double> totals;
  std::vector<HistoryCause> causes;

  /// The labels as one key, "job=hf,size=small" (sorted; empty without labels).
  std::string series_key() const;
};

/// The counts history keeps per phase: the `--fail-on` counts the reports list (count_names()
/// without `compiles`, which is the sum of two of them).
const std::vector<std::string>& history_count_names();

/// The names HistoryRun::totals has, in order.
const std::vector<std::string>& history_totals();

/// What history keeps of an analysed run; the identity (commit, branch, labels) and `path` are
/// the caller's. Never throws.
HistoryRun history_run(const RunAnalysis& analysis);

/// One series of a history: a value per run, in the order the runs were stored (commit order).
struct HistorySeries {
  /// "phase 1 steady median ms", "phase 2 jit_compiles", prefixed with the label set
  /// ("job=hf: ...") where the runs have labels.
  std::string name;
  std::string labels;  ///< HistoryRun::series_key() of its runs.
  int phase = 1;
  std::string metric;  ///< "median_ms", or a count's name.
  bool is_time() const { return metric == "median_ms"; }
  std::vector<const HistoryRun*> runs;
  std::vector<double> values;
};

/// The series of `runs` (in store order): per label set and phase its steady median, and each
/// count every run of the set measured. Points into `runs`, which must outlive them.
std::vector<HistorySeries> history_series(const std::vector<HistoryRun>& runs);

/// A change point of a series: the first run (commit) of a new level.
struct ChangePoint {
  /// Stable across checks: "<series>@<commit>", what `history ack` takes.
  std::string id;
  std::string series;
  size_t index = 0;  ///< Into the series: its first run at the new level.
  std::string commit;
  /// More time or more of a count (every count the history keeps is a cost), for sure: a
  /// step-time change point whose interval includes no change is neither regression nor
  /// improvement (`significant` false), whatever its ratio.
  bool regression = false;
  /// Whether the interval excludes no change: always for a count; for a step time, where its
  /// interval lies wholly above or below 1.
  bool significant = true;
  double before = 0.0;  ///< The mean of the segment before, and after (a count's values).
  double after = 0.0;
  /// after / before with its 95% interval (Welch on the logs of the two segments: their run-to-run
  /// spread); exact (low = high = ratio) for a count. Infinite for a count that was 0.
  double ratio = 1.0;
  double low = 1.0;
  double high = 1.0;
  double p = 0.0;          ///< Welch's two-sided p; 0 for a count.
  size_t runs_before = 0;  ///< Runs in the segments it separates.
  size_t runs_after = 0;
  /// The causes that appeared with it: in its first run and in none of the segment before (for
  /// a count of compiles, the guard that started failing).
  std::vector<HistoryCause> new_causes;
  /// "regression", "improvement", or "no sure change" (not significant).
  const char* word() const;
};

/// A change point as a check reports it.
struct HistoryChange {
  ChangePoint change;
  bool time = false;          ///< A step-time median's (Otava's), else a count's.
  bool acknowledged = false;  ///< `history ack` took its id.
};

/// The change points of a count series, found exactly: each run whose value differs from the run
/// before, where the new value holds for every run up to the next change (a value that comes and
/// goes, 3 -> 4 -> 3, is two change points). Pure.
std::vector<ChangePoint> count_change_points(const HistorySeries& series);

/// A time series' change points at `indexes` (Otava's, ascending, each in (0, size)), sized:
/// each against the segments between its neighbours, with the interval of the ratio of the
/// segments' geometric means. A change point whose segments cannot be sized (a segment of one
/// run) keeps an infinite interval and p 1. Pure.
std::vector<ChangePoint> size_change_points(const HistorySeries& series,
                                            const std::vector<size_t>& indexes);

}  // namespace recompdiag
