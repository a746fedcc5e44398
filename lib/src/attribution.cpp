// Attribution: the probe signals that coincide with a slow stretch, ranked by a prior cost weight
// per signal kind, and the sentence that names them.
#include "detail/attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace recompdiag::detail {

namespace {

// A phase start, lr change or loss-weight change in a stretch: context, ranked below every probe
// signal. The probe signals' weights are in kProbeCounts.
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

namespace {

// What the run's events within a stretch say besides the probe counts.
struct StretchEvents {
  int64_t compiles = 0;
  std::vector<std::string> compile_reasons;  // distinct, in order
  int64_t rebuilds = 0;                      // optimizer rebuilds that threw the state away
  std::string rebuild_reason;
  std::vector<Signal> context;  // phase starts, lr and loss-weight changes
};

// An event that gives a stretch context, ranked below every probe signal; `text`, 0.6's words.
Signal context_signal(const EventRecord& e, std::string text) {
  Signal s;
  s.kind = "context";
  s.count = 1;
  s.score = kWeightContextEvent;
  s.text = std::move(text);
  s.event = e.kind;
  s.phase = e.phase;
  return s;
}

StretchEvents read_events(const std::vector<const EventRecord*>& events) {
  StretchEvents out;
  std::set<std::string> seen;
  for (const EventRecord* e : events) {
    switch (e->kind) {
      case EventKind::kCompile:
        ++out.compiles;
        if (!e->reason.empty() && seen.insert(e->reason).second) {
          out.compile_reasons.push_back(e->reason);
        }
        break;
      case EventKind::kOptimizerRebuild:
        // A rebuild that migrated the state is no reset.
        if (e->detail.is_object() && e->detail.value("handoff", "") == "migrate") break;
        ++out.rebuilds;
        if (out.rebuild_reason.empty()) out.rebuild_reason = e->reason;
        break;
      case EventKind::kPhaseStart:
        out.context.push_back(context_signal(*e, "phase " + std::to_string(e->phase) + " start"));
        break;
      case EventKind::kLrChange:
        out.context.push_back(context_signal(*e, "lr change"));
        break;
      case EventKind::kLossWeightsChange:
        out.context.push_back(context_signal(*e, "loss-weight change"));
        break;
      default:
        break;
    }
  }
  return out;
}

// Count `f` of a stretch as a signal: how many, what its words name, and 0.6's words (the
// deprecated Signal::text).
Signal describe(const ProbeCountField& f, const ProbeCounts& c, const ProbeCounts& steady,
                const StretchEvents& events, const std::string& optimizer) {
  using Form = CountSignal::Form;
  const CountSignal& sig = f.signal;
  const char* one = sig.one != nullptr ? sig.one : f.one;
  const char* many = sig.many != nullptr ? sig.many : f.many;
  const auto beyond_steady = [&](int64_t ProbeCounts::*m) {
    return excess(c.*m, steady.*m, steady.steps, c.steps);
  };
  Signal out;
  out.kind = sig.kind;
  int64_t& n = out.count;
  n = c.*f.value;
  switch (sig.form) {
    case Form::kCount:
      out.text = plural(n, one, many);
      break;
    case Form::kExtra:
      n = beyond_steady(f.value);
      out.text = plural(n, one, many);
      break;
    case Form::kCopies:
      n = beyond_steady(f.value);
      out.bytes = beyond_steady(&ProbeCounts::copy_bytes);
      out.text = plural(n, one, many) + " (" + format_bytes(out.bytes) + ")";
      break;
    case Form::kCompiles: {
      // Compile events name no compiler: those the other compilers' probes do not account for.
      int64_t others = 0;
      for (const ProbeCountField& g : kProbeCounts) {
        if (g.signal.form == Form::kCompiles && g.value != f.value) others += c.*g.value;
      }
      n = std::max(n, events.compiles - others);
      out.reasons = events.compile_reasons;
      out.text = plural(n, one, many);
      if (!events.compile_reasons.empty()) {
        std::string joined;
        for (const auto& r : events.compile_reasons) joined += (joined.empty() ? "" : "; ") + r;
        out.text += " (reason: " + shorten(joined, 100) + ")";
      }
      break;
    }
    case Form::kOptimizerReset:
      // The probe's step-counter drop and the trainer's rebuild event are one fact seen twice.
      out.optimizer = optimizer;
      if (n == 0 && !events.rebuild_reason.empty()) out.reasons = {events.rebuild_reason};
      out.text = optimizer + " state reset" +
                 (n == 0 && !events.rebuild_reason.empty()
                      ? " (" + shorten(events.rebuild_reason, 60) + ")"
                      : "");
      n = std::max(n, events.rebuilds);
      break;
    case Form::kLr:
      out.lr_requested = c.lr_requested;
      out.lr_effective = c.lr_effective;
      out.text = "lr " + format_double("%g", c.lr_requested) + " requested but " +
                 format_double("%g", c.lr_effective) + " in effect (" + plural(n, one, many) + ")";
      break;
    case Form::kMemoryGrowth: {
      const int64_t grown = c.resident_last_bytes - c.resident_first_bytes;
      out.bytes = grown;
      out.steps = c.steps;
      out.text = "resident memory grew steadily (" + std::string(grown >= 0 ? "+" : "-") +
                 format_bytes(grown >= 0 ? grown : -grown) + " over " +
                 plural(c.steps, "step", "steps") + ", " + plural(n, one, many) + ")";
      break;
    }
    case Form::kAlerts:
      // A slow_step alert only restates that the stretch is slow: it is no probe signal; a
      // memory_growth alert is a signal of its own.
      n -= c.slow_step_alerts + c.memory_growth_alerts;
      out.text = plural(n, one, many);
      break;
  }
  return out;
}

}  // namespace

std::vector<Signal> rank_signals(const ProbeCounts& c, const ProbeCounts& steady,
                                 const std::vector<const EventRecord*>& events,
                                 const std::string& optimizer) {
  const StretchEvents seen = read_events(events);
  struct Ranked {
    Signal signal;
    double weight;
  };
  std::vector<Ranked> ranked;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.signal.kind == nullptr) continue;
    Signal signal = describe(f, c, steady, seen, optimizer);
    if (signal.count <= 0) continue;
    signal.score = static_cast<double>(signal.count) * f.signal.weight;
    ranked.push_back({std::move(signal), f.signal.weight});
  }
  for (const Signal& ctx : seen.context) ranked.push_back({ctx, kWeightContextEvent});
  // Equal scores: the costlier kind of event first, then kProbeCounts' order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    if (x.signal.score != y.signal.score) return x.signal.score > y.signal.score;
    return x.weight > y.weight;
  });
  std::vector<Signal> out;
  out.reserve(ranked.size());
  for (Ranked& r : ranked) out.push_back(std::move(r.signal));
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

namespace {

// Compiles as the probe or the trainer's events count them, whichever saw more.
ProbeCounts with_compiles_folded(ProbeCounts c) {
  c.jit_compiles = std::max(c.jit_compiles, c.compile_events);
  c.compile_events = 0;
  return c;
}

}  // namespace

std::vector<Signal> rank_phase_signals(const PhaseAnalysis& b, const PhaseAnalysis* a,
                                       const std::string& optimizer) {
  ProbeCounts c = with_compiles_folded(b.counts);
  if (a != nullptr) {
    const ProbeCounts base = with_compiles_folded(a->counts);
    for (const ProbeCountField& f : kProbeCounts) {
      if (f.value == nullptr || f.value == &ProbeCounts::steps) continue;  // umbrellas: no member
      int64_t& v = c.*f.value;
      // Largest-on-one-step counts: what B has beyond A's worst step; the others beyond A's rate.
      v = f.aggregate == CountAggregate::kMax
              ? std::max<int64_t>(0, v - base.*f.value)
              : detail::excess(v, base.*f.value, base.steps, c.steps);
    }
  }
  c.alerts = 0;  // the alerts restate the signals
  return detail::rank_signals(c, ProbeCounts{}, {}, optimizer);
}

}  // namespace recompdiag
