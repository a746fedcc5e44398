// Attribution: the probe signals that coincide with a slow stretch, ranked by a prior cost weight
// per signal kind, and the sentence that names them.
#include "detail/attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace recompdiag::detail {

namespace {

// Prior cost of one occurrence of each signal, used to rank what coincides with a slow stretch:
// a compile costs far more than a first-seen op signature, which costs more than one extra sync.
constexpr double kWeightCompile = 5000.0;  // the root event: signatures and plan builds follow it
// Per memory_growth alert. Memory that grows steadily ends the run once it runs out, however fast
// the steps are: it outranks every bounded cost (a storm of 100 compiles scores 500,000).
constexpr double kWeightMemoryGrowth = 1.0e6;
constexpr double kWeightModuleLoad = 100.0;
constexpr double kWeightGraphInstantiation = 100.0;
constexpr double kWeightPlanBuild = 50.0;
// A reset optimizer state changes what the run learns as well as its speed: always name it.
constexpr double kWeightOptimizerReset = 200.0;
constexpr double kWeightProfilingRun = 20.0;
constexpr double kWeightNewKernel = 10.0;
constexpr double kWeightNewSignature = 5.0;
constexpr double kWeightStateOffDevice = 5.0;
// Per step: an lr that is not in effect changes what every step learns.
constexpr double kWeightLrNotInEffect = 50.0;
constexpr double kWeightSync = 2.0;
constexpr double kWeightCopy = 2.0;
constexpr double kWeightHostOp = 1.0;
constexpr double kWeightAlert = 1.0;
constexpr double kWeightContextEvent = 0.5;

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

}  // namespace

int64_t excess(int64_t observed, int64_t steady_total, int64_t steady_steps, int64_t steps) {
  if (steady_steps <= 0) return observed;
  const double expected = static_cast<double>(steady_total) / static_cast<double>(steady_steps) *
                          static_cast<double>(steps);
  return std::max<int64_t>(
      0, static_cast<int64_t>(std::llround(static_cast<double>(observed) - expected)));
}

std::string optimizer_name(const RunHeader& h) {
  return h.optimizer.empty() ? std::string("optimizer") : h.optimizer;
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
        // A rebuild that migrated the state is no reset.
        if (e->detail.is_object() && e->detail.value("handoff", "") == "migrate") break;
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
  if (c.memory_growth_alerts > 0) {
    const int64_t grown = c.resident_last_bytes - c.resident_first_bytes;
    add("memory_growth", c.memory_growth_alerts, kWeightMemoryGrowth,
        "resident memory grew steadily (" + std::string(grown >= 0 ? "+" : "-") +
            format_bytes(grown >= 0 ? grown : -grown) + " over " +
            plural(c.steps, "step", "steps") + ", " +
            plural(c.memory_growth_alerts, "memory_growth alert", "memory_growth alerts") + ")");
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
  add("optimizer_state_dtype", c.optimizer_state_dtype_mismatch, kWeightStateOffDevice,
      plural(c.optimizer_state_dtype_mismatch, "optimizer state tensor with another dtype",
             "optimizer state tensors with another dtype") +
          " than its parameter");
  add("lr_not_in_effect", c.lr_not_in_effect, kWeightLrNotInEffect,
      "lr " + format_double("%g", c.lr_requested) + " requested but " +
          format_double("%g", c.lr_effective) + " in effect (" +
          plural(c.lr_not_in_effect, "step", "steps") + ")");
  const int64_t syncs = excess(c.syncs, steady.syncs, steady.steps, c.steps);
  add("syncs", syncs, kWeightSync, plural(syncs, "extra host sync", "extra host syncs"));
  const int64_t copies = excess(c.copies, steady.copies, steady.steps, c.steps);
  const int64_t bytes = excess(c.copy_bytes, steady.copy_bytes, steady.steps, c.steps);
  add("copies", copies, kWeightCopy,
      plural(copies, "extra cross-device copy", "extra cross-device copies") + " (" +
          format_bytes(bytes) + ")");
  const int64_t host_ops = excess(c.host_ops, steady.host_ops, steady.steps, c.steps);
  add("host_ops", host_ops, kWeightHostOp, plural(host_ops, "extra host op", "extra host ops"));
  // A slow_step alert only restates that the stretch is slow: it is no probe signal; a
  // memory_growth alert is named above.
  const int64_t alerts = c.alerts - c.slow_step_alerts - c.memory_growth_alerts;
  add("alerts", alerts, kWeightAlert, plural(alerts, "alert", "alerts"));
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
  if (s.extra_s > 0.0) {
    text += " ran " + format_double(r >= 10 ? "%.0fx" : "%.1fx", r) + " the steady median (+" +
            format_double("%.3g s", s.extra_s) + ")";
  } else {
    // A switch is always listed; one that cost nothing says so instead of calling itself slow.
    text += " ran no slower than the steady median (" + format_double("%.1fx", r) + ")";
  }
  if (s.signals.empty()) return text + "; no probe signal coincides";
  text += "; ";
  for (size_t i = 0; i < s.signals.size() && i < 4; ++i) {
    if (i) text += ", ";
    text += s.signals[i].text;
  }
  return text;
}

}  // namespace recompdiag::detail

namespace recompdiag {

std::vector<Signal> rank_phase_signals(const PhaseAnalysis& b, const PhaseAnalysis* a,
                                       const std::string& optimizer) {
  ProbeCounts c = b.counts;
  // Compiles as the probe or the trainer's events count them, whichever saw more.
  c.jit_compiles = std::max(c.jit_compiles, c.compile_events);
  c.compile_events = 0;
  if (a != nullptr) {
    const ProbeCounts& base = a->counts;
    auto less = [&](int64_t& v, int64_t base_total) {
      v = detail::excess(v, base_total, base.steps, c.steps);
    };
    less(c.jit_compiles, std::max(base.jit_compiles, base.compile_events));
    less(c.jit_plan_builds, base.jit_plan_builds);
    less(c.jit_profiling_runs, base.jit_profiling_runs);
    less(c.new_signatures, base.new_signatures);
    less(c.new_kernels, base.new_kernels);
    less(c.module_loads, base.module_loads);
    less(c.graph_instantiations, base.graph_instantiations);
    less(c.optimizer_resets, base.optimizer_resets);
    less(c.lr_not_in_effect, base.lr_not_in_effect);
    less(c.syncs, base.syncs);
    less(c.copies, base.copies);
    less(c.copy_bytes, base.copy_bytes);
    less(c.host_ops, base.host_ops);
    less(c.memory_growth_alerts, base.memory_growth_alerts);
    // Largest-on-one-step counts: what B has beyond A's worst step.
    c.optimizer_state_off_device =
        std::max<int64_t>(0, c.optimizer_state_off_device - base.optimizer_state_off_device);
    c.optimizer_state_dtype_mismatch = std::max<int64_t>(
        0, c.optimizer_state_dtype_mismatch - base.optimizer_state_dtype_mismatch);
  }
  c.alerts = 0;  // the alerts restate the signals
  return detail::rank_signals(c, ProbeCounts{}, {}, optimizer);
}

}  // namespace recompdiag
