// What history keeps of a run, the series of a history, and their change points' sizes.

#include "recompdiag/core/history.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "detail/compare_parts.h"
#include "recompdiag/core/analysis.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The steady median's distribution-free 95% interval: the order statistics of ranks
// n/2 -+ 1.96 sqrt(n)/2 (the binomial's normal approximation).
void median_interval(const std::vector<double>& sorted, double median, HistoryPhase& out) {
  const size_t n = sorted.size();
  out.low_ms = out.high_ms = median;
  if (n < 6) return;
  const double half = 1.959964 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double nn = static_cast<double>(n);
  const auto lo = static_cast<size_t>(std::max(0.0, std::floor(nn / 2.0 - half)));
  const auto hi = static_cast<size_t>(std::min(nn - 1.0, std::ceil(nn / 2.0 + half)));
  out.low_ms = sorted[lo];
  out.high_ms = sorted[hi];
}

// "forward (model.py:12)": the frame as a cause names it.
std::string frame_label(const std::string& function, const std::string& file, int64_t line) {
  const size_t slash = file.find_last_of('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  if (base.empty()) return function;
  return function + " (" + base + (line > 0 ? ":" + std::to_string(line) : "") + ")";
}

std::vector<HistoryCause> causes_of(const RunAnalysis& a) {
  std::vector<HistoryCause> out;
  for (const FrameFinding& f : a.compile.frames) {
    for (const GuardFinding& g : f.guards) {
      out.push_back({"guard", frame_label(f.function, f.file, f.line), g.subject, g.cause,
                     g.recompiles, g.first_step});
    }
  }
  for (const OtherCompileFinding& c : a.compile.other_compiles) {
    out.push_back({"compile", c.compiler, c.reason, "", c.count, c.first_step});
  }
  return out;
}

std::map<std::string, double> totals_of(const RunAnalysis& a) {
  const CompileFindings& c = a.compile;
  int64_t breaks = 0;
  for (const GraphBreakFinding& g : c.graph_breaks) breaks += g.count;
  const auto n = [](int64_t v) { return static_cast<double>(v); };
  return {{"compiles", n(c.compiles)},
          {"recompiles", n(c.recompiles)},
          {"compile_s", c.compile_s},
          {"graph_breaks", n(breaks)},
          {"eager_calls", n(c.eager ? c.eager->calls : 0)},
          {"fx_cache_hits", n(c.fx_cache.hits)},
          {"fx_cache_misses", n(c.fx_cache.misses)},
          {"aot_cache_hits", n(c.aot_cache.hits)},
          {"aot_cache_misses", n(c.aot_cache.misses)}};
}

// The causes of `runs[i]` whose key none of runs[from, i) has.
std::vector<HistoryCause> new_causes(const HistorySeries& s, size_t from, size_t i) {
  std::set<std::string> seen;
  for (size_t k = from; k < i; ++k) {
    for (const HistoryCause& c : s.runs[k]->causes) seen.insert(c.key());
  }
  std::vector<HistoryCause> out;
  for (const HistoryCause& c : s.runs[i]->causes) {
    if (!seen.count(c.key())) out.push_back(c);
  }
  return out;
}

ChangePoint change_at(const HistorySeries& s, size_t i) {
  ChangePoint cp;
  cp.series = s.name;
  cp.index = i;
  cp.commit = s.runs[i]->commit;
  cp.id = s.name + "@" + cp.commit;
  return cp;
}

double mean(const std::vector<double>& v, size_t from, size_t to) {
  double sum = 0.0;
  for (size_t k = from; k < to; ++k) sum += v[k];
  return sum / static_cast<double>(to - from);
}

// Welch's test of the logs of values[from, at) against values[at, to) (run_ratio_test(): the
// runs as the unit): cp's ratio, interval and p. A segment of one run cannot be sized.
void size_by_welch(const std::vector<double>& values, size_t from, size_t at, size_t to,
                   ChangePoint& cp) {
  cp.before = mean(values, from, at);
  cp.after = mean(values, at, to);
  cp.runs_before = at - from;
  cp.runs_after = to - at;
  std::vector<double> a, b;
  for (size_t k = from; k < to; ++k) (k < at ? a : b).push_back(std::max(values[k], 1e-300));
  cp.significant = false;
  if (a.size() < 2 || b.size() < 2) {
    const auto log_mean = [](const std::vector<double>& x) {
      double sum = 0.0;
      for (double v : x) sum += std::log(v);
      return sum / static_cast<double>(x.size());
    };
    cp.ratio = std::exp(log_mean(b) - log_mean(a));
    cp.low = 0.0;
    cp.high = kInf;
    cp.p = 1.0;
    return;
  }
  const stats::RatioTest t = stats::run_ratio_test(a, b);
  cp.ratio = t.ratio;
  cp.low = t.low;
  cp.high = t.high;
  cp.p = t.p;
  cp.significant = t.low > 1.0 || t.high < 1.0;
  cp.regression = t.low > 1.0;
}

}  // namespace

const char* ChangePoint::word() const {
  if (!significant) return "no sure change";
  return regression ? "regression" : "improvement";
}

std::string HistoryCause::key() const { return kind + "|" + frame + "|" + subject; }

std::string HistoryRun::series_key() const {
  std::string key;
  for (const auto& [name, value] : labels) key += (key.empty() ? "" : ",") + name + "=" + value;
  return key;
}

const std::vector<std::string>& history_count_names() {
  // The gate counts the reports list: an umbrella judged for --fail-on alone (compiles) would
  // repeat its parts' change points.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ProbeCountField& f : kProbeCounts) {
      if (f.gate.name != nullptr && f.gate.listed) out.push_back(f.gate.name);
    }
    return out;
  }();
  return names;
}

const std::vector<std::string>& history_totals() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, value] : totals_of(RunAnalysis{})) out.push_back(name);
    return out;
  }();
  return names;
}

HistoryRun history_run(const RunAnalysis& a) {
  HistoryRun run;
  run.path = a.path;
  run.host = a.header.host;
  run.torch_version = a.header.torch_version;
  run.mode = a.header.mode;
  run.config = a.header.config.dump();
  run.start_time = a.header.start_time;
  run.steps = a.steps;
  for (const PhaseAnalysis& p : a.phases) {
    HistoryPhase h;
    h.phase = p.phase;
    h.steps = p.all.n;
    h.steady_steps = p.steady.n;
    h.median_ms = p.steady.median_ms;
    median_interval(p.steady_sorted_ms, p.steady.median_ms, h);
    for (const std::string& name : history_count_names()) {
      if (const std::optional<int64_t> v = detail::gate_count_value(name, p.counts, a, p.phase)) {
        h.counts[name] = *v;
      }
    }
    run.phases.push_back(std::move(h));
  }
  run.totals = totals_of(a);
  run.causes = causes_of(a);
  return run;
}

std::vector<HistorySeries> history_series(const std::vector<HistoryRun>& runs) {
  // Per label set, in the order each first appears; per phase; the median, then each count.
  std::vector<std::string> keys;
  for (const HistoryRun& r : runs) {
    if (std::find(keys.begin(), keys.end(), r.series_key()) == keys.end()) {
      keys.push_back(r.series_key());
    }
  }
  std::vector<HistorySeries> out;
  for (const std::string& key : keys) {
    std::set<int> phases;
    for (const HistoryRun& r : runs) {
      if (r.series_key() != key) continue;
      for (const HistoryPhase& p : r.phases) phases.insert(p.phase);
    }
    std::vector<std::string> metrics = {"median_ms"};
    for (const std::string& name : history_count_names()) metrics.push_back(name);
    for (int phase : phases) {
      for (const std::string& metric : metrics) {
        HistorySeries s;
        s.labels = key;
        s.phase = phase;
        s.metric = metric;
        s.name = (key.empty() ? "" : key + ": ") + "phase " + std::to_string(phase) + " " +
                 (metric == "median_ms" ? std::string("steady median ms") : metric);
        for (const HistoryRun& r : runs) {
          if (r.series_key() != key) continue;
          for (const HistoryPhase& p : r.phases) {
            if (p.phase != phase) continue;
            if (metric == "median_ms") {
              if (p.steady_steps == 0) continue;
              s.values.push_back(p.median_ms);
            } else {
              const auto it = p.counts.find(metric);
              if (it == p.counts.end()) continue;
              s.values.push_back(static_cast<double>(it->second));
            }
            s.runs.push_back(&r);
          }
        }
        if (s.values.size() >= 2) out.push_back(std::move(s));
      }
    }
  }
  return out;
}

std::vector<ChangePoint> count_change_points(const HistorySeries& s) {
  std::vector<ChangePoint> out;
  size_t level_start = 0;
  for (size_t i = 1; i < s.values.size(); ++i) {
    if (s.values[i] == s.values[i - 1]) continue;
    ChangePoint cp = change_at(s, i);
    size_t next = i + 1;
    while (next < s.values.size() && s.values[next] == s.values[i]) ++next;
    cp.before = s.values[i - 1];
    cp.after = s.values[i];
    cp.runs_before = i - level_start;
    cp.runs_after = next - i;
    cp.regression = cp.after > cp.before;
    cp.ratio = cp.before > 0.0 ? cp.after / cp.before : kInf;
    cp.low = cp.high = cp.ratio;
    cp.p = 0.0;
    cp.new_causes = new_causes(s, level_start, i);
    out.push_back(std::move(cp));
    level_start = i;
  }
  return out;
}

std::vector<ChangePoint> size_change_points(const HistorySeries& s,
                                            const std::vector<size_t>& indexes) {
  std::vector<size_t> bounds = {0};
  for (size_t i : indexes) {
    if (i > bounds.back() && i < s.values.size()) bounds.push_back(i);
  }
  bounds.push_back(s.values.size());
  std::vector<ChangePoint> out;
  for (size_t k = 1; k + 1 < bounds.size(); ++k) {
    ChangePoint cp = change_at(s, bounds[k]);
    size_by_welch(s.values, bounds[k - 1], bounds[k], bounds[k + 1], cp);
    cp.new_causes = new_causes(s, bounds[k - 1], bounds[k]);
    out.push_back(std::move(cp));
  }
  return out;
}

}  // namespace recompdiag
