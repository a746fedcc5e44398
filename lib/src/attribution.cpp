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

// An event that gives a stretch context, ranked below every probe signal.
Signal context_signal(const EventRecord& e) {
  Signal s;
  s.kind = "context";
  s.count = 1;
  s.score = kWeightContextEvent;
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
        out.context.push_back(context_signal(*e));
        break;
      case EventKind::kLrChange:
        out.context.push_back(context_signal(*e));
        break;
      case EventKind::kLossWeightsChange:
        out.context.push_back(context_signal(*e));
        break;
      default:
        break;
    }
  }
  return out;
}

// Count `f` of a stretch as a signal: how many, and what its words name.
Signal describe(const ProbeCountField& f, const ProbeCounts& c, const ProbeCounts& steady,
                const StretchEvents& events, const std::string& optimizer) {
  using Form = CountSignal::Form;
  const CountSignal& sig = f.signal;
  const auto beyond_steady = [&](int64_t ProbeCounts::*m) {
    return excess(c.*m, steady.*m, steady.steps, c.steps);
  };
  Signal out;
  out.kind = sig.kind;
  int64_t& n = out.count;
  n = c.*f.value;
  switch (sig.form) {
    case Form::kCount:
      break;
    case Form::kExtra:
      n = beyond_steady(f.value);
      break;
    case Form::kCopies:
      n = beyond_steady(f.value);
      out.bytes = beyond_steady(&ProbeCounts::copy_bytes);
      break;
    case Form::kCompiles: {
      // Compile events name no compiler: those the other compilers' probes do not account for.
      int64_t others = 0;
      for (const ProbeCountField& g : kProbeCounts) {
        if (g.signal.form == Form::kCompiles && g.value != f.value) others += c.*g.value;
      }
      n = std::max(n, events.compiles - others);
      out.reasons = events.compile_reasons;
      break;
    }
    case Form::kOptimizerReset:
      // The probe's step-counter drop and the trainer's rebuild event are one fact seen twice.
      out.optimizer = optimizer;
      if (n == 0 && !events.rebuild_reason.empty()) out.reasons = {events.rebuild_reason};
      n = std::max(n, events.rebuilds);
      break;
    case Form::kLr:
      out.lr_requested = c.lr_requested;
      out.lr_effective = c.lr_effective;
      break;
    case Form::kMemoryGrowth: {
      const int64_t grown = c.resident_last_bytes - c.resident_first_bytes;
      out.bytes = grown;
      out.steps = c.steps;
      break;
    }
    case Form::kAlerts:
      // A slow_step alert only restates that the stretch is slow: it is no probe signal; a
      // memory_growth alert is a signal of its own.
      n -= c.slow_step_alerts + c.memory_growth_alerts;
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
