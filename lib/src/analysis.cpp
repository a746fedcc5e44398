#include "recompdiag/core/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "recompdiag/core/statistics.h"

namespace recompdiag {

namespace {

// Prior cost of one occurrence of each signal, used to rank what coincides with a slow stretch:
// a compile costs far more than a first-seen op signature, which costs more than one extra sync.
constexpr double kWeightCompile = 5000.0;  // the root event: signatures and plan builds follow it
constexpr double kWeightModuleLoad = 100.0;
constexpr double kWeightGraphInstantiation = 100.0;
constexpr double kWeightPlanBuild = 50.0;
// A reset optimizer state changes what the run learns as well as its speed: always name it.
constexpr double kWeightOptimizerReset = 200.0;
constexpr double kWeightProfilingRun = 20.0;
constexpr double kWeightNewKernel = 10.0;
constexpr double kWeightNewSignature = 5.0;
constexpr double kWeightStateOffDevice = 5.0;
constexpr double kWeightSync = 2.0;
constexpr double kWeightCopy = 2.0;
constexpr double kWeightHostOp = 1.0;
constexpr double kWeightAlert = 1.0;
constexpr double kWeightContextEvent = 0.5;

constexpr double kSigmaPerMad = 1.4826;

void add_step(ProbeCounts& c, const StepRecord& s) {
  ++c.steps;
  if (s.jit) {
    c.has_jit = true;
    c.jit_compiles += s.jit->compiles;
    c.jit_plan_builds += s.jit->plan_builds;
    c.jit_profiling_runs += s.jit->profiling_runs;
  }
  if (s.dispatch && s.dispatch->sampled) {
    const DispatchStats& d = *s.dispatch;
    c.has_dispatch = true;
    c.new_signatures += d.new_signatures;
    c.host_ops += d.host_ops;
    c.copies += d.copies_h2d + d.copies_d2h + d.copies_d2d;
    c.copy_bytes += d.bytes_h2d + d.bytes_d2h + d.bytes_d2d;
    c.syncs += d.syncs;
  }
  if (s.cupti) {
    c.has_cupti = true;
    c.new_kernels += s.cupti->new_kernels;
    c.module_loads += s.cupti->module_loads;
    c.graph_instantiations += s.cupti->graph_instantiations;
  }
  if (s.optimizer) {
    c.has_optimizer = true;
    if (s.optimizer->state_reset) ++c.optimizer_resets;
    c.optimizer_state_off_device =
        std::max(c.optimizer_state_off_device, s.optimizer->state_off_device);
    c.optimizer_state_missing = std::max(c.optimizer_state_missing, s.optimizer->state_missing);
  }
  c.alerts += static_cast<int64_t>(s.alerts.size());
}

// Summary of step times already sorted ascending.
StepTimeSummary summarize_sorted(const std::vector<double>& sorted) {
  StepTimeSummary out;
  out.n = static_cast<int64_t>(sorted.size());
  if (sorted.empty()) return out;
  const stats::MeanVariance mv = stats::mean_variance(sorted);
  out.mean_ms = mv.mean;
  out.stddev_ms = std::sqrt(mv.variance);
  out.total_s = mv.mean * static_cast<double>(mv.n) / 1000.0;
  out.min_ms = sorted.front();
  out.max_ms = sorted.back();
  out.median_ms = stats::median_sorted(sorted);
  out.p95_ms = stats::quantile_sorted(sorted, 0.95);
  std::vector<double> dev;
  dev.reserve(sorted.size());
  for (double v : sorted) dev.push_back(std::fabs(v - out.median_ms));
  out.mad_ms = stats::median(std::move(dev));
  return out;
}

// Quantile q of `v` by selection (type 7, as stats::quantile), reordering v: O(n), no sort.
double quantile_select(std::vector<double>& v, double q) {
  const double h = static_cast<double>(v.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double x_lo = v[lo];
  if (lo + 1 >= v.size()) return x_lo;
  const double x_hi = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

// Summary of unsorted step times; selection instead of a sort keeps a million-step phase cheap.
StepTimeSummary summarize(std::vector<double> ms) {
  StepTimeSummary out;
  out.n = static_cast<int64_t>(ms.size());
  if (ms.empty()) return out;
  const stats::MeanVariance mv = stats::mean_variance(ms);
  out.mean_ms = mv.mean;
  out.stddev_ms = std::sqrt(mv.variance);
  out.total_s = mv.mean * static_cast<double>(mv.n) / 1000.0;
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  out.min_ms = *lo;
  out.max_ms = *hi;
  out.p95_ms = quantile_select(ms, 0.95);
  out.median_ms = quantile_select(ms, 0.5);
  for (double& v : ms) v = std::fabs(v - out.median_ms);
  out.mad_ms = stats::median(std::move(ms));
  return out;
}

// Cache misses of one step (see ProbeCounts::cache_misses), without building a ProbeCounts.
int64_t step_cache_misses(const StepRecord& s) {
  int64_t n = 0;
  if (s.jit) n += s.jit->plan_builds;
  if (s.dispatch && s.dispatch->sampled) n += s.dispatch->new_signatures;
  if (s.cupti) n += s.cupti->new_kernels + s.cupti->module_loads + s.cupti->graph_instantiations;
  return n;
}

// Leading steps of a phase that are slower than its steady state. The reference is the second
// half of the phase, which is past any warm-up we can detect (warm-up is capped at half).
int64_t detect_warmup(const std::vector<double>& ms, const AnalysisOptions& o, double* threshold) {
  const auto n = static_cast<int64_t>(ms.size());
  *threshold = 0.0;
  if (n < 2) return 0;
  std::vector<double> tail(ms.begin() + n / 2, ms.end());
  const double ref = stats::median(tail);
  const double spread = stats::mad(tail) * kSigmaPerMad;
  *threshold = ref + std::max(3.0 * spread, o.warmup_tolerance * ref);
  const auto cap = static_cast<int64_t>(std::floor(o.max_warmup_fraction * static_cast<double>(n)));
  const int64_t window = std::max<int64_t>(o.warmup_window, 1);
  for (int64_t i = 0; i < cap; ++i) {
    if (ms[static_cast<size_t>(i)] > *threshold) continue;
    int64_t above = 0;
    for (int64_t k = i; k < std::min(n, i + window); ++k) {
      if (ms[static_cast<size_t>(k)] > *threshold) ++above;
    }
    if (above <= 1) return i;
  }
  return cap;
}

std::string format_double(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return format_double("%.1f GB", b / 1e9);
  if (b >= 1e6) return format_double("%.1f MB", b / 1e6);
  if (b >= 1e3) return format_double("%.1f kB", b / 1e3);
  return std::to_string(bytes) + " B";
}

std::string shorten(const std::string& s, size_t max_len) {
  if (s.size() <= max_len) return s;
  return s.substr(0, max_len - 3) + "...";
}

// "Adam" from a config {"optimizer": "adam"}; "optimizer" when the config does not say.
std::string optimizer_name(const RunHeader& h) {
  if (h.config.is_object() && h.config.contains("optimizer") && h.config["optimizer"].is_string()) {
    std::string name = h.config["optimizer"].get<std::string>();
    if (name == "adam") return "Adam";
    if (name == "adamw") return "AdamW";
    if (name == "sgd") return "SGD";
    if (!name.empty()) return name;
  }
  // The trainer's config names Adam by its settings block.
  if (h.config.is_object() && h.config.contains("adam")) return "Adam";
  return "optimizer";
}

// Counter over a range beyond what the phase's steady state does at that many steps.
int64_t excess(int64_t observed, int64_t steady_total, int64_t steady_steps, int64_t steps) {
  if (steady_steps <= 0) return observed;
  const double expected = static_cast<double>(steady_total) / static_cast<double>(steady_steps) *
                          static_cast<double>(steps);
  return std::max<int64_t>(
      0, static_cast<int64_t>(std::llround(static_cast<double>(observed) - expected)));
}

std::vector<Signal> rank_signals(const ProbeCounts& c, const ProbeCounts& steady,
                                 const std::vector<const EventRecord*>& events,
                                 const std::string& optimizer) {
  std::vector<Signal> out;
  auto add = [&](const char* kind, int64_t count, double weight, std::string text) {
    if (count <= 0) return;
    out.push_back({kind, count, static_cast<double>(count) * weight, std::move(text)});
  };

  std::vector<std::string> reasons;
  std::set<std::string> seen;
  int64_t compile_events = 0;
  int64_t rebuilds = 0;
  std::string rebuild_reason;
  std::vector<std::string> context;
  for (const EventRecord* e : events) {
    switch (e->kind) {
      case EventKind::kCompile:
        ++compile_events;
        if (!e->reason.empty() && seen.insert(e->reason).second) reasons.push_back(e->reason);
        break;
      case EventKind::kOptimizerRebuild:
        ++rebuilds;
        if (rebuild_reason.empty()) rebuild_reason = e->reason;
        break;
      case EventKind::kPhaseStart:
        context.push_back("phase " + std::to_string(e->phase) + " start");
        break;
      case EventKind::kLrChange:
        context.push_back("lr change");
        break;
      case EventKind::kLossWeightsChange:
        context.push_back("loss-weight change");
        break;
      default:
        break;
    }
  }
  const int64_t compiles = std::max(c.jit_compiles, compile_events);
  if (compiles > 0) {
    std::string text = plural(compiles, "JIT compile", "JIT compiles");
    if (!reasons.empty()) {
      std::string joined;
      for (const auto& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
      text += " (reason: " + shorten(joined, 100) + ")";
    }
    add("jit_compiles", compiles, kWeightCompile, text);
  }
  add("module_loads", c.module_loads, kWeightModuleLoad,
      plural(c.module_loads, "GPU module load", "GPU module loads"));
  add("graph_instantiations", c.graph_instantiations, kWeightGraphInstantiation,
      plural(c.graph_instantiations, "CUDA graph instantiation", "CUDA graph instantiations"));
  add("jit_plan_builds", c.jit_plan_builds, kWeightPlanBuild,
      plural(c.jit_plan_builds, "JIT plan build (new specialization)",
             "JIT plan builds (new specializations)"));
  // The probe's step-counter drop and the trainer's rebuild event are one fact seen twice.
  const int64_t resets = std::max(c.optimizer_resets, rebuilds);
  add("optimizer_reset", resets, kWeightOptimizerReset,
      optimizer + " state reset" +
          (c.optimizer_resets == 0 && !rebuild_reason.empty()
               ? " (" + shorten(rebuild_reason, 60) + ")"
               : ""));
  add("jit_profiling_runs", c.jit_profiling_runs, kWeightProfilingRun,
      plural(c.jit_profiling_runs, "JIT profiling run", "JIT profiling runs"));
  add("new_kernels", c.new_kernels, kWeightNewKernel,
      plural(c.new_kernels, "first-seen kernel", "first-seen kernels"));
  add("new_signatures", c.new_signatures, kWeightNewSignature,
      plural(c.new_signatures, "first-seen op signature", "first-seen op signatures"));
  add("optimizer_state_off_device", c.optimizer_state_off_device, kWeightStateOffDevice,
      plural(c.optimizer_state_off_device, "optimizer state tensor off device",
             "optimizer state tensors off device"));
  const int64_t syncs = excess(c.syncs, steady.syncs, steady.steps, c.steps);
  add("syncs", syncs, kWeightSync, plural(syncs, "extra host sync", "extra host syncs"));
  const int64_t copies = excess(c.copies, steady.copies, steady.steps, c.steps);
  const int64_t bytes = excess(c.copy_bytes, steady.copy_bytes, steady.steps, c.steps);
  add("copies", copies, kWeightCopy,
      plural(copies, "extra cross-device copy", "extra cross-device copies") + " (" +
          format_bytes(bytes) + ")");
  const int64_t host_ops = excess(c.host_ops, steady.host_ops, steady.steps, c.steps);
  add("host_ops", host_ops, kWeightHostOp, plural(host_ops, "extra host op", "extra host ops"));
  add("alerts", c.alerts, kWeightAlert, plural(c.alerts, "alert", "alerts"));
  for (const auto& ctx : context) add("context", 1, kWeightContextEvent, ctx);
  std::stable_sort(out.begin(), out.end(),
                   [](const Signal& x, const Signal& y) { return x.score > y.score; });
  return out;
}

std::string stretch_sentence(const SlowStretch& s) {
  std::string text = s.first_step == s.last_step ? "step " + std::to_string(s.first_step)
                                                 : "steps " + std::to_string(s.first_step) + "-" +
                                                       std::to_string(s.last_step);
  const double r = s.mean_ratio;
  text += " ran " + format_double(r >= 10 ? "%.0fx" : "%.1fx", r) + " the steady median (+" +
          format_double("%.3g s", s.extra_s) + ")";
  if (s.signals.empty()) return text + "; no probe signal coincides";
  text += "; ";
  for (size_t i = 0; i < s.signals.size() && i < 4; ++i) {
    if (i) text += ", ";
    text += s.signals[i].text;
  }
  return text;
}

std::vector<double> mean_heads(const std::vector<const StepRecord*>& steps) {
  std::vector<double> sum;
  std::vector<int64_t> count;
  for (const StepRecord* s : steps) {
    if (s->head_losses.size() > sum.size()) {
      sum.resize(s->head_losses.size(), 0.0);
      count.resize(s->head_losses.size(), 0);
    }
    for (size_t h = 0; h < s->head_losses.size(); ++h) {
      if (std::isfinite(s->head_losses[h])) {
        sum[h] += s->head_losses[h];
        ++count[h];
      }
    }
  }
  for (size_t h = 0; h < sum.size(); ++h) {
    sum[h] = count[h] ? sum[h] / static_cast<double>(count[h]) : std::nan("");
  }
  return sum;
}

double mean_loss(const std::vector<const StepRecord*>& steps) {
  double sum = 0.0;
  int64_t n = 0;
  for (const StepRecord* s : steps) {
    if (std::isfinite(s->loss)) {
      sum += s->loss;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

}  // namespace

std::optional<size_t> find_phase(const RunAnalysis& analysis, int phase) {
  for (size_t i = 0; i < analysis.phases.size(); ++i) {
    if (analysis.phases[i].phase == phase) return i;
  }
  return std::nullopt;
}

RunAnalysis analyze_run(const RunFile& run, const AnalysisOptions& o) {
  RunAnalysis out;
  out.path = run.path;
  out.header = run.header;
  out.summary = run.summary;
  const std::vector<StepRecord>& steps = run.steps;
  out.steps = static_cast<int64_t>(steps.size());

  for (const SkippedLine& s : run.skipped) {
    if (s.why != "blank line")
      out.warnings.push_back(run.path + ":" + std::to_string(s.line) + ": " + s.why);
  }
  if (!run.summary) out.warnings.push_back(run.path + ": no summary line; the run did not finish");

  // Events by step, for the windows below.
  std::multimap<int64_t, const EventRecord*> events_at;
  for (const EventRecord& e : run.events) {
    events_at.emplace(e.step, &e);
    if (e.kind == EventKind::kCompile) out.compiles.push_back({e.step, e.phase, e.reason});
    if (e.kind == EventKind::kAlert) {
      std::string rule =
          e.detail.is_object() && e.detail.contains("rule") && e.detail["rule"].is_string()
              ? e.detail["rule"].get<std::string>()
              : std::string("alert");
      out.alerts.push_back({e.step, e.phase, rule, e.reason});
    }
  }
  auto events_in = [&](int64_t first, int64_t last) {
    std::vector<const EventRecord*> v;
    for (auto it = events_at.lower_bound(first); it != events_at.end() && it->first <= last; ++it) {
      v.push_back(it->second);
    }
    return v;
  };
  auto compile_events_in = [&](int64_t first, int64_t last) {
    int64_t n = 0;
    for (auto it = events_at.lower_bound(first); it != events_at.end() && it->first <= last; ++it) {
      if (it->second->kind == EventKind::kCompile) ++n;
    }
    return n;
  };
  // Alerts carried only on steps (no matching alert event) are listed too.
  {
    std::set<std::pair<int64_t, std::string>> from_events;
    for (const auto& a : out.alerts) from_events.insert({a.step, a.rule});
    for (const StepRecord& s : steps) {
      for (const std::string& rule : s.alerts) {
        if (!from_events.count({s.step, rule})) out.alerts.push_back({s.step, s.phase, rule, ""});
      }
    }
    std::stable_sort(
        out.alerts.begin(), out.alerts.end(),
        [](const AlertInstance& x, const AlertInstance& y) { return x.step < y.step; });
  }

  // Steps per phase, in the order phases first appear.
  std::map<int, std::vector<size_t>> by_phase;
  std::vector<int> phase_order;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto [it, inserted] = by_phase.try_emplace(steps[i].phase);
    if (inserted) phase_order.push_back(steps[i].phase);
    it->second.push_back(i);
    out.total_wall_s += steps[i].wall_ms / 1000.0;
  }
  std::sort(phase_order.begin(), phase_order.end());

  std::vector<char> is_warmup(steps.size(), 0);
  for (int phase : phase_order) {
    const std::vector<size_t>& idx = by_phase[phase];
    PhaseAnalysis pa;
    pa.phase = phase;
    pa.first_step = steps[idx.front()].step;
    pa.last_step = steps[idx.back()].step;
    std::vector<double> ms;
    ms.reserve(idx.size());
    for (size_t i : idx) ms.push_back(steps[i].wall_ms);
    double threshold = 0.0;
    pa.warmup_steps = detect_warmup(ms, o, &threshold);
    pa.all = summarize(ms);
    std::vector<double> steady(ms.begin() + pa.warmup_steps, ms.end());
    if (steady.size() >= 8) {
      const auto half = static_cast<std::ptrdiff_t>(steady.size() / 2);
      const double first =
          stats::median(std::vector<double>(steady.begin(), steady.begin() + half));
      const double second = stats::median(std::vector<double>(steady.begin() + half, steady.end()));
      if (first > 0) pa.drift_ratio = second / first;
    }
    std::sort(steady.begin(), steady.end());
    pa.steady = summarize_sorted(steady);
    pa.steady_sorted_ms = std::move(steady);
    double extra_ms = 0.0;
    for (int64_t k = 0; k < pa.warmup_steps; ++k) {
      extra_ms += ms[static_cast<size_t>(k)] - pa.steady.median_ms;
      is_warmup[idx[static_cast<size_t>(k)]] = 1;
    }
    pa.warmup_extra_s = std::max(0.0, extra_ms) / 1000.0;
    for (size_t k = 0; k < idx.size(); ++k) {
      add_step(pa.counts, steps[idx[k]]);
      if (static_cast<int64_t>(k) >= pa.warmup_steps) add_step(pa.steady_counts, steps[idx[k]]);
    }
    pa.counts.compile_events = compile_events_in(pa.first_step, pa.last_step);
    pa.steady_counts.compile_events = compile_events_in(
        steps[idx[std::min<size_t>(static_cast<size_t>(pa.warmup_steps), idx.size() - 1)]].step,
        pa.last_step);
    const StepRecord& last = steps[idx.back()];
    pa.final_loss = last.loss;
    pa.final_head_losses = last.head_losses;
    out.phases.push_back(std::move(pa));
  }

  // Switch costs: the warm-up of every phase after the first is the recovery from the switch.
  for (size_t p = 1; p < out.phases.size(); ++p) {
    const PhaseAnalysis& prev = out.phases[p - 1];
    const PhaseAnalysis& cur = out.phases[p];
    const std::vector<size_t>& idx = by_phase[cur.phase];
    const std::vector<size_t>& prev_idx = by_phase[prev.phase];
    SwitchCost sc;
    sc.from_phase = prev.phase;
    sc.to_phase = cur.phase;
    sc.switch_step = cur.first_step;
    sc.extra_s = cur.warmup_extra_s;
    for (const EventRecord* e : events_in(prev.last_step + 1, cur.first_step)) {
      if (e->kind == EventKind::kCompile && e->detail.is_object() &&
          e->detail.contains("compile_ms") && e->detail["compile_ms"].is_number()) {
        sc.compile_s += e->detail["compile_ms"].get<double>() / 1000.0;
      }
    }
    sc.tax_s = sc.extra_s + sc.compile_s;
    sc.recovery_steps = cur.warmup_steps;
    sc.first_step_ms = steps[idx.front()].wall_ms;
    sc.first_step_ratio = cur.steady.median_ms > 0 ? sc.first_step_ms / cur.steady.median_ms : 0.0;
    const auto before = static_cast<size_t>(std::max<int64_t>(o.switch_window_before, 0));
    const auto after = static_cast<size_t>(std::max(o.switch_window_after, cur.warmup_steps + 1));
    std::vector<const StepRecord*> around;
    for (size_t k = prev_idx.size() - std::min(before, prev_idx.size()); k < prev_idx.size(); ++k) {
      around.push_back(&steps[prev_idx[k]]);
    }
    for (size_t k = 0; k < std::min(after, idx.size()); ++k) around.push_back(&steps[idx[k]]);
    for (const StepRecord* s : around) add_step(sc.around, *s);
    sc.around.compile_events = compile_events_in(around.front()->step, around.back()->step);

    const auto lw = static_cast<size_t>(std::max<int64_t>(o.loss_window, 1));
    std::vector<const StepRecord*> loss_before;
    std::vector<const StepRecord*> loss_after;
    for (size_t k = prev_idx.size() - std::min(lw, prev_idx.size()); k < prev_idx.size(); ++k) {
      loss_before.push_back(&steps[prev_idx[k]]);
    }
    for (size_t k = 0; k < std::min(lw, idx.size()); ++k) loss_after.push_back(&steps[idx[k]]);
    sc.loss.total_before = mean_loss(loss_before);
    sc.loss.total_after = mean_loss(loss_after);
    sc.loss.head_before = mean_heads(loss_before);
    sc.loss.head_after = mean_heads(loss_after);
    const size_t heads = std::min(sc.loss.head_before.size(), sc.loss.head_after.size());
    for (size_t h = 0; h < heads; ++h)
      sc.loss.head_jump.push_back(sc.loss.head_after[h] - sc.loss.head_before[h]);
    out.switches.push_back(std::move(sc));
  }

  // Slow stretches: warm-up steps and steps over slow_factor x their phase's steady median,
  // merged across gaps of up to stretch_gap ordinary steps. A recompile's cost is often spread
  // (profiling run, then plan build); merging keeps its causes in one sentence.
  const std::string optimizer = optimizer_name(run.header);
  std::vector<SlowStretch> stretches;
  std::map<int, const PhaseAnalysis*> phase_of;
  for (const auto& pa : out.phases) phase_of[pa.phase] = &pa;
  auto is_slow = [&](size_t k) {
    const double ref = phase_of[steps[k].phase]->steady.median_ms;
    return ref > 0 && (is_warmup[k] || steps[k].wall_ms > o.slow_factor * ref);
  };
  const auto gap = static_cast<size_t>(std::max<int64_t>(o.stretch_gap, 0));
  size_t i = 0;
  while (i < steps.size()) {
    if (!is_slow(i)) {
      ++i;
      continue;
    }
    const PhaseAnalysis* pa = phase_of[steps[i].phase];
    const double ref = pa->steady.median_ms;
    size_t j = i;
    for (size_t next = j + 1;
         next < steps.size() && next <= j + gap + 1 && steps[next].phase == steps[i].phase;
         ++next) {
      if (is_slow(next)) j = next;
    }
    SlowStretch s;
    s.first_step = steps[i].step;
    s.last_step = steps[j].step;
    s.phase = steps[i].phase;
    ProbeCounts c;
    double sum_ms = 0.0;
    for (size_t k = i; k <= j; ++k) {
      add_step(c, steps[k]);
      sum_ms += steps[k].wall_ms;
      s.max_ratio = std::max(s.max_ratio, steps[k].wall_ms / ref);
    }
    const auto n = static_cast<double>(j - i + 1);
    s.mean_ratio = sum_ms / n / ref;
    s.extra_s = (sum_ms - n * ref) / 1000.0;
    // An event's step is the step it precedes, so the stretch's own range holds its causes.
    std::vector<const EventRecord*> evs = events_in(s.first_step, s.last_step);
    s.signals = rank_signals(c, pa->steady_counts, evs, optimizer);
    s.sentence = stretch_sentence(s);
    stretches.push_back(std::move(s));
    i = j + 1;
  }
  out.slow_stretch_count = static_cast<int64_t>(stretches.size());
  if (stretches.size() > o.max_slow_stretches) {
    std::stable_sort(
        stretches.begin(), stretches.end(),
        [](const SlowStretch& x, const SlowStretch& y) { return x.extra_s > y.extra_s; });
    stretches.resize(o.max_slow_stretches);
    std::sort(stretches.begin(), stretches.end(), [](const SlowStretch& x, const SlowStretch& y) {
      return x.first_step < y.first_step;
    });
  }
  out.slow_stretches = std::move(stretches);

  // Outcome: the summary's figures when the run finished, else the last step's.
  out.outcome.finished = run.summary.has_value();
  if (run.summary && !run.summary->final_head_losses.empty()) {
    out.outcome.final_loss = run.summary->final_loss;
    out.outcome.final_head_losses = run.summary->final_head_losses;
  } else if (!steps.empty()) {
    out.outcome.final_loss = steps.back().loss;
    out.outcome.final_head_losses = steps.back().head_losses;
  }

  // Chart buckets of equal step counts.
  if (!steps.empty()) {
    const size_t points = std::max<size_t>(o.chart_points, 1);
    const size_t per = (steps.size() + points - 1) / points;
    for (size_t b = 0; b < steps.size(); b += per) {
      const size_t e = std::min(steps.size(), b + per);
      ChartBucket cb;
      cb.first_step = steps[b].step;
      cb.last_step = steps[e - 1].step;
      cb.phase = steps[b].phase;
      cb.wall_min_ms = steps[b].wall_ms;
      cb.wall_max_ms = steps[b].wall_ms;
      double sum = 0.0;
      std::vector<const StepRecord*> in;
      in.reserve(e - b);
      for (size_t k = b; k < e; ++k) {
        const StepRecord& s = steps[k];
        sum += s.wall_ms;
        cb.wall_min_ms = std::min(cb.wall_min_ms, s.wall_ms);
        cb.wall_max_ms = std::max(cb.wall_max_ms, s.wall_ms);
        if (is_warmup[k]) cb.warmup = true;
        if (s.jit) cb.compiles += s.jit->compiles;
        cb.cache_misses += step_cache_misses(s);
        in.push_back(&s);
      }
      cb.compiles = std::max(cb.compiles, compile_events_in(cb.first_step, cb.last_step));
      cb.wall_mean_ms = sum / static_cast<double>(e - b);
      cb.head_losses = mean_heads(in);
      out.chart.push_back(std::move(cb));
    }
  }
  return out;
}

}  // namespace recompdiag
