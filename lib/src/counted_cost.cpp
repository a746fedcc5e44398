// The counted cost of compare_run_sets(): what the events whose counts differ exactly cost,
// measured on the steps that carry them, with an interval from the steady steps' spread.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "detail/compare_parts.h"

namespace recompdiag::detail {

namespace {

// The costed counts (kProbeCounts' costed gates, costed_counts()), one bit each in a step's mask.
static_assert(kCostedCounts <= 8, "more than 8 costed counts: widen the step masks");
const std::vector<CostedCount>& costed_list() {
  const std::vector<CostedCount>& c = costed_counts();
  return c;
}

// The mask bit of the costed count whose compile time `clock` measured (0: none).
uint8_t clock_bit(CompileClock clock) {
  const std::vector<CostedCount>& c = costed_list();
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i].clock == clock) return static_cast<uint8_t>(1u << i);
  }
  return 0;
}

uint8_t jit_bit() { return clock_bit(CompileClock::kJitEvents); }
uint8_t dynamo_bit() { return clock_bit(CompileClock::kDynamoSteps); }

// The mask bit of the costed count named `name` (0: none).
uint8_t bit_of(const char* name) {
  const std::vector<CostedCount>& c = costed_list();
  for (size_t i = 0; i < c.size(); ++i) {
    if (std::string(c[i].name) == name) return static_cast<uint8_t>(1u << i);
  }
  return 0;
}

// Whether `umbrella`'s change in `phase` equals the change of one of its parts that is costed
// (in `costed`): the same events, counted twice.
bool accounted_by_a_part(const CountChange& umbrella, const std::vector<CountChange>& changes,
                         uint8_t costed, int phase) {
  for (const ProbeCountField& part : kProbeCounts) {
    if (part.part_of == nullptr || part.gate.name == nullptr || umbrella.count != part.part_of ||
        (costed & bit_of(part.gate.name)) == 0) {
      continue;
    }
    for (const CountChange& p : changes) {
      if (p.phase == phase && p.count == part.gate.name &&
          umbrella.b_min - umbrella.a_max == p.b_min - p.a_max) {
        return true;
      }
    }
  }
  return false;
}

// Above this fraction of a run's steady steps, a count is a per-step cost (the steady test's).
constexpr double kPerStepFraction = 0.5;

// The variance of a median is about pi/2 times that of a mean, for normal data.
constexpr double kHalfPi = 1.5707963267948966;

double compile_ms(const EventRecord& e) {
  if (e.kind != EventKind::kCompile || !e.detail.is_object()) return 0.0;
  auto it = e.detail.find("compile_ms");
  return it != e.detail.end() && it->is_number() ? it->get<double>() : 0.0;
}

// One run's phase: which costed counts each step carries.
struct PhaseMasks {
  std::vector<size_t> index;       // the phase's step indices, in order
  std::vector<uint8_t> mask;       // per phase step: bit c set when it carries costed_list()[c]
  std::vector<int64_t> epoch;      // per phase step: its epoch
  std::vector<double> compile_at;  // per phase step: compile time of the events before it
  int64_t steady_begin = 0;        // first steady position in `index`
  double compile_ms = 0.0;         // compile events of the phase (between steps)
  double step_compile_ms = 0.0;    // torch.compile's compile time inside the phase's steps
};

PhaseMasks phase_masks(const ColumnarRun& run, const PhaseAnalysis& pa) {
  const std::vector<CostedCount>& costed = costed_list();
  PhaseMasks m;
  const StepColumns& steps = run.steps;
  PackedColumn::Reader phases(steps.phase_column());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (phases(i) == pa.phase) m.index.push_back(i);
  }
  m.mask.assign(m.index.size(), 0);
  m.compile_at.assign(m.index.size(), 0.0);
  for (size_t i : m.index) m.epoch.push_back(steps.epoch(i));
  m.steady_begin = std::min<int64_t>(pa.warmup_steps, static_cast<int64_t>(m.index.size()));
  // Contiguous stretches of the phase's indices, each read as runs of steps.
  for (size_t k = 0; k < m.index.size();) {
    size_t end = k + 1;
    while (end < m.index.size() && m.index[end] == m.index[end - 1] + 1) ++end;
    size_t pos = k;
    steps.for_each_run(m.index[k], m.index[end - 1] + 1,
                       [&](const StepRecord& first, const StepRecord& stride, size_t n) {
                         // Floating-point fields are constant within a run of steps.
                         if (first.compiled) {
                           m.step_compile_ms += first.compiled->compile_ms * static_cast<double>(n);
                         }
                         for (size_t c = 0; c < costed.size(); ++c) {
                           const int64_t v0 = costed[c].events(first);
                           const int64_t dv = costed[c].events(stride);
                           if (v0 <= 0 && dv <= 0) continue;
                           for (size_t j = 0; j < n; ++j) {
                             if (v0 + static_cast<int64_t>(j) * dv > 0) {
                               m.mask[pos + j] |= static_cast<uint8_t>(1u << c);
                             }
                           }
                         }
                         pos += n;
                       });
    k = end;
  }
  // Compile events: the step they precede carries them; their time was spent between steps.
  for (const EventRecord& e : run.events) {
    if (e.kind != EventKind::kCompile || e.step < pa.first_step || e.step > pa.last_step) continue;
    m.compile_ms += compile_ms(e);
    const auto it = std::lower_bound(m.index.begin(), m.index.end(), e.step,
                                     [&](size_t i, int64_t s) { return steps.step(i) < s; });
    if (it != m.index.end() && steps.step(*it) == e.step) {
      const auto k = static_cast<size_t>(it - m.index.begin());
      m.mask[k] |= jit_bit();
      m.compile_at[k] += compile_ms(e);
    }
  }
  return m;
}

// One run's counted cost: its time over its steady median at the phase positions in `at` (the
// steps that carry the events in any run of either side, so that a slow step both runs have, with
// the event on one side only, cancels), plus the compile time between steps when compiles are
// costed.
struct RunCost {
  double cost_ms = 0.0;
  double compile_ms = 0.0;
  double measured_ms = 0.0;  // what the costed compilers' own clocks recorded
  double var_ms2 = 0.0;
  double phase_ms = 0.0;    // every step plus compile time between steps
  int64_t event_steps = 0;  // its own steps carrying the costed events
};

RunCost run_cost(const ColumnarRun& run, const PhaseAnalysis& pa, const PhaseMasks& m,
                 const std::vector<char>& at, uint8_t costed) {
  RunCost r;
  const double median = pa.steady.median_ms;
  // A step's noise: the steady steps' robust sigma, scaled to the step's size (a step three
  // times the median is about three times as noisy); the median's own error counts once per
  // costed step, as it is subtracted from each.
  const double sigma = 1.4826 * pa.steady.mad_ms;
  const double var_median =
      pa.steady.n > 0 ? kHalfPi * sigma * sigma / static_cast<double>(pa.steady.n) : 0.0;
  int64_t costed_steps = 0;
  for (size_t k = 0; k < m.index.size(); ++k) {
    const double t = run.steps.wall_ms(m.index[k]);
    r.phase_ms += t;
    r.event_steps += (m.mask[k] & costed) != 0;
    if (k >= at.size() || !at[k]) continue;
    ++costed_steps;
    r.cost_ms += t - median;
    const double scale = median > 0.0 ? std::max(1.0, t / median) : 1.0;
    r.var_ms2 += scale * scale * sigma * sigma;
  }
  r.var_ms2 += static_cast<double>(costed_steps * costed_steps) * var_median;
  r.phase_ms += m.compile_ms;
  if (costed & jit_bit()) r.measured_ms += m.compile_ms;
  if (costed & dynamo_bit()) r.measured_ms += m.step_compile_ms;
  if (costed & jit_bit()) {
    r.cost_ms += m.compile_ms;
    r.compile_ms = m.compile_ms;
    // Compile time is as noisy, relatively, as a step.
    const double rel = median > 0.0 ? sigma / median : 0.0;
    r.var_ms2 += m.compile_ms * m.compile_ms * rel * rel;
  }
  return r;
}

// A side's mean cost and the variance of that mean: the runs' own noise, or their spread when
// that is larger (two or more runs).
struct SideCost {
  RunCost mean;
  double var_mean_ms2 = 0.0;
  double event_steps = 0.0;  // its runs' steps carrying the costed events, mean
};

SideCost side_cost(const std::vector<RunCost>& runs) {
  SideCost s;
  const double n = static_cast<double>(runs.size());
  std::vector<double> costs;
  for (const RunCost& r : runs) {
    s.mean.cost_ms += r.cost_ms / n;
    s.mean.compile_ms += r.compile_ms / n;
    s.mean.measured_ms += r.measured_ms / n;
    s.mean.phase_ms += r.phase_ms / n;
    s.var_mean_ms2 += r.var_ms2 / (n * n);
    s.event_steps += static_cast<double>(r.event_steps) / n;
    costs.push_back(r.cost_ms);
  }
  if (runs.size() >= 2) {
    s.var_mean_ms2 = std::max(s.var_mean_ms2, stats::mean_variance(costs).variance / n);
  }
  return s;
}

// B's cost minus A's for one pair that took turns: step k of the phase in A and in B ran in the
// same epoch, back to back, so the drift both saw cancels in their difference. The noise of a
// costed step's difference is that of the steps that carry no events, paired the same way (their
// robust spread, scaled to the step's size), which leaves the drift out where the noise model of
// independent runs cannot. nullopt when the phases' steps or epochs differ, or fewer than three
// steady steps carry no event (then that model stands).
struct PairedCost {
  double difference_ms = 0.0;
  double se_ms = 0.0;
  double df = 0.0;
};

std::optional<PairedCost> paired_cost(const SideRuns& a, const SideRuns& b, const PhaseMasks& ma,
                                      const PhaseMasks& mb, const std::vector<char>& at,
                                      uint8_t costed) {
  if (ma.index.size() != mb.index.size() || ma.epoch != mb.epoch) return std::nullopt;
  const double median_a = phase_of(a, 0).steady.median_ms;
  const double median_b = phase_of(b, 0).steady.median_ms;
  auto excess = [&](size_t k) {
    return (b.files[0]->steps.wall_ms(mb.index[k]) - median_b) -
           (a.files[0]->steps.wall_ms(ma.index[k]) - median_a);
  };
  std::vector<double> quiet;  // paired differences of steady steps that carry no event
  PairedCost out;
  double var_ms2 = 0.0;
  int64_t costed_steps = 0;
  const auto steady_begin = static_cast<size_t>(std::max(ma.steady_begin, mb.steady_begin));
  for (size_t k = 0; k < ma.index.size(); ++k) {
    const bool carries = k < at.size() && at[k];
    if (carries) {
      out.difference_ms += excess(k);
      ++costed_steps;
    } else if (k >= steady_begin) {
      quiet.push_back(excess(k));
    }
    if ((costed & jit_bit()) != 0) out.difference_ms += mb.compile_at[k] - ma.compile_at[k];
  }
  if (quiet.size() < 3) return std::nullopt;
  const double sigma = 1.4826 * stats::mad(quiet);
  for (size_t k = 0; k < ma.index.size() && k < at.size(); ++k) {
    if (!at[k]) continue;
    const double t =
        std::max(b.files[0]->steps.wall_ms(mb.index[k]), a.files[0]->steps.wall_ms(ma.index[k]));
    const double scale = median_a > 0.0 ? std::max(1.0, t / median_a) : 1.0;
    var_ms2 += scale * scale * sigma * sigma;
  }
  // The medians subtracted: their difference's error, once per costed step.
  var_ms2 += static_cast<double>(costed_steps * costed_steps) * kHalfPi * sigma * sigma /
             static_cast<double>(quiet.size());
  if ((costed & jit_bit()) != 0) {
    // Compile time is as noisy, relatively, as a paired step.
    const double rel = median_a > 0.0 ? sigma / median_a : 0.0;
    var_ms2 += (mb.compile_ms * mb.compile_ms + ma.compile_ms * ma.compile_ms) * rel * rel;
  }
  out.se_ms = std::sqrt(var_ms2);
  out.df = static_cast<double>(quiet.size()) - 1.0;
  return out;
}

// The costed counts (bits of costed_list()) that differ between the sides in `phase`.
uint8_t differing_counts(int phase, const std::vector<CountChange>& changes) {
  uint8_t differing = 0;
  for (const CountChange& cc : changes) {
    if (cc.phase != phase) continue;
    differing |= bit_of(cc.count.c_str());
  }
  return differing;
}

// The costed counts most of a run's steady steps carry: a per-step cost, the steady test's.
uint8_t per_step_counts(const PhaseMasks& m) {
  const auto steady = static_cast<double>(m.index.size()) - static_cast<double>(m.steady_begin);
  uint8_t out = 0;
  for (size_t c = 0; steady > 0 && c < costed_list().size(); ++c) {
    int64_t carrying = 0;
    for (size_t k = static_cast<size_t>(m.steady_begin); k < m.mask.size(); ++k) {
      carrying += (m.mask[k] >> c) & 1u;
    }
    if (static_cast<double>(carrying) > kPerStepFraction * steady) {
      out |= static_cast<uint8_t>(1u << c);
    }
  }
  return out;
}

// Whether B has more, and fewer, of some costed count.
struct Directions {
  bool more = false;
  bool fewer = false;
};

// Names `phase`'s differing counts in `out`: costed (with the causes among them) or per-step.
Directions name_counts(int phase, const std::vector<CountChange>& changes, uint8_t differing,
                       uint8_t costed, CountedCost& out) {
  Directions d;
  for (const CountChange& cc : changes) {
    const uint8_t bit = cc.phase == phase ? bit_of(cc.count.c_str()) : 0;
    if ((differing & bit) == 0) continue;
    if ((costed & bit) == 0) {
      out.per_step_counts.push_back(cc.count);
      continue;
    }
    out.counts.push_back(cc.count);
    d.more |= cc.b_min > cc.a_max;
    d.fewer |= cc.b_max < cc.a_min;
    // An umbrella's change that a costed part's change accounts for whole (cache misses that
    // are all plan builds) is named once, as the part's.
    if (!accounted_by_a_part(cc, changes, costed, phase)) out.cause_counts.push_back(cc.count);
  }
  return d;
}

// The phase positions that carry a costed event in any run of either side. A step between two
// that carry events belongs to them (a compile's profiling runs and plan builds land on every
// other step; the one between pays too), as slow stretches join steps.
std::vector<char> event_positions(const std::vector<PhaseMasks> (&masks)[2], uint8_t costed) {
  std::vector<char> at;
  for (const std::vector<PhaseMasks>& side : masks) {
    for (const PhaseMasks& m : side) {
      at.resize(std::max(at.size(), m.mask.size()), 0);
      for (size_t k = 0; k < m.mask.size(); ++k) at[k] |= (m.mask[k] & costed) != 0;
    }
  }
  for (size_t k = 1; k + 1 < at.size(); ++k) at[k] |= at[k - 1] && at[k + 1];
  return at;
}

// The difference's interval and two-sided p, from its standard error and degrees of freedom.
void set_test(CountedCost& out, double se_s, double df, double confidence) {
  out.confidence = confidence;
  const double q = stats::student_t_quantile(0.5 + confidence / 2.0, df);
  out.low_s = out.difference_s - q * se_s;
  out.high_s = out.difference_s + q * se_s;
  out.p =
      se_s > 0.0
          ? std::min(1.0, 2.0 * stats::student_t_upper_tail(std::abs(out.difference_s) / se_s, df))
          : (out.difference_s != 0.0 ? 0.0 : 1.0);
  out.steps_s = out.difference_s;
  out.steps_low_s = out.low_s;
  out.steps_high_s = out.high_s;
}

// What the compilers' own clocks measured is measured, not estimated: B's more compiles cost it
// at least their measured time over A's (its steps ran the compiles and their own work too),
// however noisy the steps around them; B's fewer compiles saved it at least as much.
void bound_by_measured(CountedCost& out, double measured_s, Directions d) {
  out.measured_s = measured_s;
  if (measured_s > 0.0 && d.more && !d.fewer) {
    out.measured_bounds = true;
    out.difference_s = std::max(out.difference_s, measured_s);
    out.low_s = std::max(out.low_s, measured_s);
    out.high_s = std::max(out.high_s, out.difference_s);
  } else if (measured_s < 0.0 && d.fewer && !d.more) {
    out.measured_bounds = true;
    out.difference_s = std::min(out.difference_s, measured_s);
    out.high_s = std::min(out.high_s, measured_s);
    out.low_s = std::min(out.low_s, out.difference_s);
  }
}

// The verdict: a significant share beyond the threshold, or a measured bound beyond it alone.
void decide(CountedCost& out, const CompareOptions& o, Directions d) {
  out.share = out.phase_s_a > 0.0 ? out.difference_s / out.phase_s_a : 0.0;
  // Events B has only fewer of cannot cost B time, nor can events it has only more of save it
  // any: a difference against the counts is something else at the same steps (the GPU check's
  // first steps, 1.1 s in one run and 0.55 s in the other, carried 2 fewer cache misses).
  out.against_counts = (out.difference_s > 0.0 && d.fewer && !d.more) ||
                       (out.difference_s < 0.0 && d.more && !d.fewer);
  const bool significant = out.p < o.alpha && !out.against_counts;
  const double bound_share =
      out.measured_bounds && out.phase_s_a > 0.0 ? out.measured_s / out.phase_s_a : 0.0;
  if ((significant && out.share > o.threshold) || bound_share > o.threshold) {
    out.verdict = Verdict::kRegression;
  }
  if ((significant && out.share < -o.threshold) || bound_share < -o.threshold) {
    out.verdict = Verdict::kImprovement;
  }
}

}  // namespace

std::optional<CountedCost> counted_cost(int phase, const SideRuns& a, const SideRuns& b,
                                        const std::vector<CountChange>& changes,
                                        const CompareOptions& o) {
  const uint8_t differing = differing_counts(phase, changes);
  if (!differing) return std::nullopt;
  const SideRuns* sides[2] = {&a, &b};
  std::vector<PhaseMasks> masks[2];
  uint8_t per_step = 0;
  for (int s = 0; s < 2; ++s) {
    for (size_t i = 0; i < sides[s]->files.size(); ++i) {
      masks[s].push_back(phase_masks(*sides[s]->files[i], phase_of(*sides[s], i)));
      per_step |= per_step_counts(masks[s].back());
    }
  }
  const auto costed = static_cast<uint8_t>(differing & ~per_step);
  CountedCost out;
  out.phase = phase;
  const Directions directions = name_counts(phase, changes, differing, costed, out);
  if (!costed) return out.per_step_counts.empty() ? std::nullopt : std::optional(out);

  const std::vector<char> at = event_positions(masks, costed);
  SideCost cost[2];
  for (int s = 0; s < 2; ++s) {
    std::vector<RunCost> runs;
    for (size_t i = 0; i < sides[s]->files.size(); ++i) {
      runs.push_back(
          run_cost(*sides[s]->files[i], phase_of(*sides[s], i), masks[s][i], at, costed));
    }
    cost[s] = side_cost(runs);
  }
  out.event_steps_a = cost[0].event_steps;
  out.event_steps_b = cost[1].event_steps;
  out.cost_s_a = cost[0].mean.cost_ms / 1000.0;
  out.cost_s_b = cost[1].mean.cost_ms / 1000.0;
  out.compile_s_a = cost[0].mean.compile_ms / 1000.0;
  out.compile_s_b = cost[1].mean.compile_ms / 1000.0;
  out.phase_s_a = cost[0].mean.phase_ms / 1000.0;
  out.difference_s = out.cost_s_b - out.cost_s_a;
  double se_s = std::sqrt(cost[0].var_mean_ms2 + cost[1].var_mean_ms2) / 1000.0;
  double df = std::numeric_limits<double>::infinity();
  if (o.turns && a.files.size() == 1 && b.files.size() == 1) {
    if (const auto paired = paired_cost(a, b, masks[0][0], masks[1][0], at, costed)) {
      out.difference_s = paired->difference_ms / 1000.0;
      se_s = paired->se_ms / 1000.0;
      df = paired->df;
    }
  }
  set_test(out, se_s, df, o.bootstrap.confidence);
  bound_by_measured(out, (cost[1].mean.measured_ms - cost[0].mean.measured_ms) / 1000.0,
                    directions);
  decide(out, o, directions);
  return out;
}

}  // namespace recompdiag::detail
