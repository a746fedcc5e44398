#include "recompdiag/core/straggler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>

#include "recompdiag/core/error.h"
#include "recompdiag/core/statistics.h"

namespace recompdiag {

namespace {

/// The steps of `run` in [first, last] (steps are in order).
std::pair<size_t, size_t> step_range(const RunFile& run, int64_t first, int64_t last) {
  auto lo = std::lower_bound(run.steps.begin(), run.steps.end(), first,
                             [](const StepRecord& s, int64_t v) { return s.step < v; });
  auto hi = std::upper_bound(run.steps.begin(), run.steps.end(), last,
                             [](int64_t v, const StepRecord& s) { return v < s.step; });
  return {static_cast<size_t>(lo - run.steps.begin()), static_cast<size_t>(hi - run.steps.begin())};
}

double wait_in(const RunFile& run, int64_t first, int64_t last) {
  auto [lo, hi] = step_range(run, first, last);
  double wait = 0.0;
  for (size_t i = lo; i < hi; ++i) {
    if (run.steps[i].comm) wait += run.steps[i].comm->wait_ms;
  }
  return wait;
}

bool compiled_in(const RunFile& run, int64_t first, int64_t last) {
  return std::any_of(run.events.begin(), run.events.end(), [&](const EventRecord& e) {
    return e.kind == EventKind::kCompile && e.step >= first && e.step <= last;
  });
}

/// What `run` did in [first, last] that could hold the others up, most specific first, into `f`.
void cause_in(const RunFile& run, int64_t first, int64_t last, StragglerFinding& f) {
  for (const EventRecord& e : run.events) {
    if (e.kind != EventKind::kCompile || e.step < first || e.step > last) continue;
    f.cause_kind = StragglerCause::kCompiled;
    f.cause_reason = e.reason;
    if (e.detail.is_object() && e.detail.contains("compile_ms") &&
        e.detail["compile_ms"].is_number()) {
      f.compile_ms = e.detail["compile_ms"].get<double>();
    }
    return;
  }
  auto [lo, hi] = step_range(run, first, last);
  int64_t plans = 0, profiling = 0;
  std::vector<std::string> alerts;
  for (size_t i = lo; i < hi; ++i) {
    const StepRecord& s = run.steps[i];
    if (s.jit) {
      plans += s.jit->plan_builds;
      profiling += s.jit->profiling_runs;
    }
    for (const std::string& a : s.alerts) {
      if (std::find(alerts.begin(), alerts.end(), a) == alerts.end()) alerts.push_back(a);
    }
  }
  if (plans > 0) {
    f.cause_kind = StragglerCause::kPlanBuilds;
    f.cause_count = plans;
    return;
  }
  if (profiling > 0) {
    f.cause_kind = StragglerCause::kProfilingRuns;
    f.cause_count = profiling;
    return;
  }
  for (const EventRecord& e : run.events) {
    if (e.step >= first && e.step <= last && e.kind == EventKind::kOptimizerRebuild) {
      f.cause_kind = StragglerCause::kOptimizerRebuild;
      f.cause_reason = e.reason;
      return;
    }
  }
  if (!alerts.empty()) {
    f.cause_kind = StragglerCause::kAlert;
    f.cause_reason = alerts.front();
    return;
  }
  f.cause_kind = StragglerCause::kComputedLonger;
}

RankSummary summarize_rank(const RunFile& run) {
  RankSummary r;
  r.rank = run.header.rank;
  r.path = run.path;
  r.steps = static_cast<int64_t>(run.steps.size());
  r.finished = run.summary && !run.summary->failed();
  std::vector<double> wall, wait;
  double total_ms = 0.0, total_wait_ms = 0.0;
  for (const StepRecord& s : run.steps) {
    wall.push_back(s.wall_ms);
    total_ms += s.wall_ms;
    const double w = s.comm ? s.comm->wait_ms : 0.0;
    wait.push_back(w);
    total_wait_ms += w;
  }
  if (!wall.empty()) {
    r.median_step_ms = stats::median(wall);
    r.p95_step_ms = stats::quantile(wall, 0.95);
    r.median_wait_ms = stats::median(wait);
  }
  r.total_wait_s = total_wait_ms / 1000.0;
  r.wait_share = total_ms > 0 ? total_wait_ms / total_ms : 0.0;
  for (const EventRecord& e : run.events) r.compiles += e.kind == EventKind::kCompile ? 1 : 0;
  return r;
}

StragglerFinding explain_stretch(const std::vector<RunFile>& ranks, const SlowStretch& stretch,
                                 const StragglerOptions& options) {
  StragglerFinding f;
  f.first_step = stretch.first_step;
  f.last_step = stretch.last_step;
  f.phase = stretch.phase;
  std::vector<double> waits;
  for (const RunFile& r : ranks) waits.push_back(wait_in(r, f.first_step, f.last_step));
  const size_t least =
      static_cast<size_t>(std::min_element(waits.begin(), waits.end()) - waits.begin());
  f.wait_min_ms = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == least) continue;
    f.waiters.push_back(ranks[i].header.rank);
    f.wait_min_ms = std::min(f.wait_min_ms, waits[i] - waits[least]);
    f.wait_max_ms = std::max(f.wait_max_ms, waits[i] - waits[least]);
  }
  if (f.waiters.empty()) f.wait_min_ms = 0.0;
  // Which ranks compiled in the stretch. When the rank that waited least is the only one, that is
  // a deterministic signal of its own, so on a busy machine, where the stretch's extra time is
  // mostly noise, waits beyond the floor suffice.
  const bool least_compiled = compiled_in(ranks[least], f.first_step, f.last_step);
  const auto compiling = std::count_if(ranks.begin(), ranks.end(), [&](const RunFile& r) {
    return compiled_in(r, f.first_step, f.last_step);
  });
  const bool compiled_alone = least_compiled && compiling == 1;
  const bool stands_out =
      !f.waiters.empty() && f.wait_min_ms >= options.min_wait_spread_ms &&
      (compiled_alone || f.wait_min_ms >= options.min_wait_share * stretch.extra_s * 1000.0);
  if (!stands_out) {
    f.waiters.clear();
    return f;
  }
  f.straggler = ranks[least].header.rank;
  cause_in(ranks[least], f.first_step, f.last_step, f);
  // Not this rank's doing alone: it was the last of ranks that all compiled.
  if (least_compiled && compiling == static_cast<std::ptrdiff_t>(ranks.size())) {
    f.every_rank_compiled = true;
  }
  return f;
}

}  // namespace

void StragglerOptions::validate() const {
  require_in_range("StragglerOptions::min_wait_spread_ms", min_wait_spread_ms, 0.0, HUGE_VAL, false,
                   true);
  require_in_range("StragglerOptions::min_wait_share", min_wait_share, 0.0, 1.0, false, false);
}

JobAnalysis analyze_job(const std::vector<RunFile>& ranks, const RunAnalysis& job,
                        const StragglerOptions& options) {
  options.validate();
  JobAnalysis out;
  if (ranks.empty()) return out;
  out.job_id = ranks.front().header.job_id;
  out.world_size = ranks.front().header.world_size;
  for (const RunFile& r : ranks) {
    out.ranks.push_back(summarize_rank(r));
    out.compiles_differ |= out.ranks.back().compiles != out.ranks.front().compiles;
  }
  for (const SlowStretch& s : job.slow_stretches) {
    out.stragglers.push_back(explain_stretch(ranks, s, options));
  }
  return out;
}

}  // namespace recompdiag
