// `history check`: every series' change points, exact for counts and Otava's for step times.

#include "recompdiag/runner/history_check.h"

#include <algorithm>
#include <cmath>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/history_report.h"

namespace recompdiag::runner {

namespace {

// Otava's change points sized, without those that bound a level of fewer than `min_runs` runs:
// each time the least significant of them is dropped and the rest sized again.
std::vector<ChangePoint> levels(const HistorySeries& s, std::vector<size_t> indexes,
                                size_t min_runs) {
  for (;;) {
    std::vector<ChangePoint> cps = size_change_points(s, indexes);
    const ChangePoint* weakest = nullptr;
    for (const ChangePoint& cp : cps) {
      if (std::min(cp.runs_before, cp.runs_after) >= min_runs) continue;
      if (!weakest || cp.p >= weakest->p) weakest = &cp;
    }
    if (!weakest) return cps;
    indexes.erase(std::find(indexes.begin(), indexes.end(), weakest->index));
  }
}

}  // namespace

void HistoryCheckOptions::validate() const {
  otava.validate();
  if (min_level_runs < 1) throw InputError("a level needs at least one run");
}

int HistoryCheck::exit_code() const {
  for (const HistoryChange& c : changes) {
    if (c.change.regression && !c.acknowledged) return 1;
  }
  return 0;
}

HistoryCheck check_history(HistoryStore& store, const HistoryCheckOptions& o) {
  o.validate();
  HistoryCheck check;
  check.store = store.describe();
  check.runs = store.runs(o.since);
  check.series = history_series(check.runs);
  std::vector<std::vector<double>> times;
  for (const HistorySeries& s : check.series) {
    if (s.is_time()) times.push_back(s.values);
  }
  std::vector<std::vector<size_t>> otava;
  const bool ask_otava = std::any_of(
      times.begin(), times.end(), [&](const auto& v) { return v.size() >= 2 * o.min_level_runs; });
  if (ask_otava) {
    OtavaResult r = otava_change_points(times, o.otava);
    otava = std::move(r.change_points);
    check.otava_version = r.version;
  }
  std::vector<std::string> acked;
  for (const Acknowledgement& a : store.acknowledgements()) acked.push_back(a.change_id);
  size_t t = 0;
  for (const HistorySeries& s : check.series) {
    std::vector<ChangePoint> cps;
    if (s.is_time()) {
      const std::vector<size_t> found = ask_otava ? otava[t] : std::vector<size_t>{};
      ++t;
      cps = levels(s, found, o.min_level_runs);
    } else {
      cps = count_change_points(s);
    }
    for (ChangePoint& cp : cps) {
      const bool ack = std::find(acked.begin(), acked.end(), cp.id) != acked.end();
      check.changes.push_back({std::move(cp), s.is_time(), ack});
    }
  }
  return check;
}

reports::HistoryReport history_report_of(const HistoryCheck& check) {
  reports::HistoryReport r;
  r.store = check.store;
  r.runs = check.runs.size();
  r.series = check.series;
  r.changes = check.changes;
  r.otava_version = check.otava_version;
  return r;
}

std::string history_check_text(const HistoryCheck& check) {
  return reports::render_history_markdown(history_report_of(check));
}

nlohmann::ordered_json history_check_json(const HistoryCheck& check) {
  nlohmann::ordered_json changes = nlohmann::ordered_json::array();
  for (const HistoryChange& c : check.changes) {
    const ChangePoint& cp = c.change;
    nlohmann::ordered_json causes = nlohmann::ordered_json::array();
    for (const HistoryCause& h : cp.new_causes) {
      causes.push_back({{"kind", h.kind},
                        {"frame", h.frame},
                        {"subject", h.subject},
                        {"cause", h.cause},
                        {"count", h.count}});
    }
    const auto finite = [](double v) {
      return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
    };
    changes.push_back({{"id", cp.id},
                       {"series", cp.series},
                       {"kind", c.time ? "step_time" : "count"},
                       {"commit", cp.commit},
                       {"regression", cp.regression},
                       {"significant", cp.significant},
                       {"acknowledged", c.acknowledged},
                       {"before", cp.before},
                       {"after", cp.after},
                       {"ratio", finite(cp.ratio)},
                       {"low", finite(cp.low)},
                       {"high", finite(cp.high)},
                       {"p", cp.p},
                       {"runs_before", cp.runs_before},
                       {"runs_after", cp.runs_after},
                       {"new_causes", causes}});
  }
  return {{"type", "history_check"},        {"schema", 1},
          {"store", check.store},           {"runs", check.runs.size()},
          {"series", check.series.size()},  {"otava", check.otava_version},
          {"exit_code", check.exit_code()}, {"changes", changes}};
}

}  // namespace recompdiag::runner
