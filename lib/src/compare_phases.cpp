// Per-phase timing tests of compare_run_sets(): runs as the unit when a side has several, else
// the block bootstrap; then Holm over the phases, TOST for "no change", and the verdicts.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>

#include "detail/compare_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag::detail {

namespace {

// Steps per epoch from the run header's config, else 1: an epoch is the shortest block.
int64_t epoch_steps(const RunHeader& h) {
  if (h.config.is_object()) {
    auto it = h.config.find("steps_per_epoch");
    if (it != h.config.end() && it->is_number_integer()) {
      return std::max<int64_t>(1, it->get<int64_t>());
    }
  }
  return 1;
}

double geometric_mean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

// Every step of one phase of a run, in step order.
std::vector<double> phase_series(const ColumnarRun& run, int phase) {
  std::vector<double> out;
  PackedColumn::Reader phases(run.steps.phase_column());
  for (size_t i = 0; i < run.steps.size(); ++i) {
    if (phases(i) == phase) out.push_back(run.steps.wall_ms(i));
  }
  return out;
}

// The epochs of one phase of a run, in order: each epoch's median over its steady steps (NaN
// when it has none: all warm-up) and its mean over every step.
struct PhaseEpochs {
  std::vector<double> steady_median_ms;
  std::vector<double> mean_ms;
};

PhaseEpochs phase_epochs(const ColumnarRun& run, int phase, int64_t warmup_steps) {
  PhaseEpochs out;
  PackedColumn::Reader phases(run.steps.phase_column());
  PackedColumn::Reader epochs(run.steps.epoch_column());
  std::vector<double> steady;
  double sum = 0.0;
  int64_t n = 0;
  int64_t position = 0;  // within the phase
  auto close = [&] {
    if (n == 0) return;
    out.steady_median_ms.push_back(steady.empty() ? std::numeric_limits<double>::quiet_NaN()
                                                  : stats::median(steady));
    out.mean_ms.push_back(sum / static_cast<double>(n));
    steady.clear();
    sum = 0.0;
    n = 0;
  };
  int64_t epoch = 0;
  for (size_t i = 0; i < run.steps.size(); ++i) {
    if (phases(i) != phase) continue;
    const int64_t e = epochs(i);
    if (n > 0 && e != epoch) close();
    epoch = e;
    const double t = run.steps.wall_ms(i);
    if (position++ >= warmup_steps) steady.push_back(t);
    sum += t;
    ++n;
  }
  close();
  return out;
}

// Fraction of the per-epoch log ratios trimmed from each end (Yuen's 20%, the common choice).
constexpr double kEpochTrim = 0.2;

// B / A from per-epoch pairs of one pair of runs that took turns: the paired t on the epochs'
// log ratios, so the drift both runs saw cancels. (The ratio of the phase's medians is no
// estimate here: under drift the median of a mixture of epochs moves with which steps land near
// it, far more than the epochs' ratios do.) Epochs where either value is NaN are left out.
// nullopt with fewer than three pairs.
std::optional<stats::RatioTest> epoch_pair_test(const std::vector<double>& a,
                                                const std::vector<double>& b,
                                                const stats::RatioTestOptions& rto) {
  std::vector<double> pa, pb;
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (a[k] > 0.0 && b[k] > 0.0) {  // false for NaN
      pa.push_back(a[k]);
      pb.push_back(b[k]);
    }
  }
  if (pa.size() < 3) return std::nullopt;
  // Trimmed: on a busy machine a few epochs coincide with a burst of load on one side only.
  return stats::trimmed_paired_ratio_test(pa, pb, kEpochTrim, rto);
}

// A run's blocks whose medians spread this many times the given run-to-run spread contradict it.
constexpr double kContradiction = 2.0;

// (q90 - q10) / 2.563 of a run's log block medians: their SD had they been normal, and robust to
// a few blocks that a burst of load hit. 0 with fewer than three blocks.
double level_spread(const stats::StepBlocks& blocks) {
  const std::vector<double>& m = blocks.sorted_log_medians;  // ascending
  if (m.size() < 3) return 0.0;
  return (stats::quantile_sorted(m, 0.9) - stats::quantile_sorted(m, 0.1)) / 2.563;
}

// A run whose block medians spread more than this (10%) jumped between levels while it ran.
constexpr double kLevelJumps = 0.10;

// Whether the runs' medians may sit on different levels of the machine, so that the exact
// permutation test bounds their t test (bound_by_permutation). Not for pairs by steps: each
// pair's ratio is its step pairs' (step_paired_ratio), which the levels cannot move, and the two
// sides of an A/A pair are exchangeable (`ab` draws the first turn), so that the pairs' log ratios
// are symmetric about 0; the paired t test then holds its level (a simulation of heavy-tailed
// pair effects in statistics_test), where 5 pairs' sign flips could never go below p = 1/16.
bool levels_bound_runs(const PhaseComparison& pc) {
  return pc.level_spread > kLevelJumps && !pc.pairs_by_steps;
}

// A run's phase steps `all` (phase_series()) past their warm-up, in step order, cut into blocks
// of at least an epoch.
stats::StepBlocks steady_blocks(const std::vector<double>& all, const ColumnarRun& run,
                                int64_t warmup_steps) {
  const auto skip = std::min<size_t>(all.size(), static_cast<size_t>(warmup_steps));
  return stats::make_step_blocks(
      std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(skip), all.end()),
      epoch_steps(run.header));
}

// Runs as the unit: the t test leans on normally spread run medians, which a machine that jumps
// between levels does not give (a few runs land on two levels). The exact permutation test (sign
// flips when paired) bounds its p from below, and where no arrangement of so few runs could be
// significant, the TOST cannot prove "no change" either.
void bound_by_permutation(stats::RatioTest& t, const std::vector<double>& a,
                          const std::vector<double>& b, bool paired) {
  std::vector<double> la, lb, d;
  for (double x : a) la.push_back(std::log(x));
  for (double x : b) lb.push_back(std::log(x));
  for (size_t i = 0; paired && i < la.size(); ++i) d.push_back(lb[i] - la[i]);
  const stats::PermutationP perm =
      paired ? stats::sign_flip_test(d) : stats::permutation_test(la, lb);
  if (!perm.exact) return;
  t.p = std::max(t.p, perm.p);
  t.tost_p = std::max(t.tost_p, perm.min_p / 2.0);
}

// A test that proves nothing: no measure of the noise.
stats::RatioTest unknown_noise_test(double log_ratio, const stats::RatioTestOptions& rto) {
  return stats::ratio_test_from_log(log_ratio, std::numeric_limits<double>::infinity(), 1.0, rto);
}

// B / A of one run's whole-phase mean step time, with its noise from the spread of the epochs'
// means (an epoch is the block: a cost that recurs per epoch shows in every block, a one-off
// spike in one block only) and the assumed run-to-run spread of both runs.
stats::RatioTest whole_phase_blocks_test(const std::vector<double>& a, const std::vector<double>& b,
                                         int64_t block_steps, std::optional<double> run_noise,
                                         double run_noise_df, const stats::RatioTestOptions& rto) {
  struct Blocks {
    double mean = 0.0;          // of every step
    double rel_var_mean = 0.0;  // variance of the mean over the blocks, relative to mean^2
    int64_t n = 0;              // blocks
  };
  auto blocks = [block_steps](const std::vector<double>& v) {
    Blocks out;
    std::vector<double> means;
    double total = 0.0;
    for (size_t i = 0; i < v.size(); i += static_cast<size_t>(block_steps)) {
      const size_t end = std::min(v.size(), i + static_cast<size_t>(block_steps));
      double sum = 0.0;
      for (size_t j = i; j < end; ++j) sum += v[j];
      means.push_back(sum / static_cast<double>(end - i));
      total += sum;
    }
    out.n = static_cast<int64_t>(means.size());
    out.mean = total / static_cast<double>(v.size());
    if (out.n >= 2) {
      const stats::MeanVariance mv = stats::mean_variance(means);
      out.rel_var_mean = mv.variance / static_cast<double>(out.n) / (out.mean * out.mean);
    }
    return out;
  };
  const Blocks ba = blocks(a);
  const Blocks bb = blocks(b);
  const double log_ratio = std::log(bb.mean / ba.mean);
  stats::RatioTest t;
  if (ba.n < 3 || bb.n < 3 || !run_noise) {
    // Too few epochs, or no measure of the runs' spread: nothing is proven.
    t = unknown_noise_test(log_ratio, rto);
  } else {
    const double va = ba.rel_var_mean;
    const double vb = bb.rel_var_mean;
    const double df = std::min(stats::welch_df(va, ba.n, vb, bb.n), run_noise_df);
    t = stats::ratio_test_from_log(log_ratio, std::sqrt(va + vb + 2.0 * *run_noise * *run_noise),
                                   df, rto);
  }
  t.n_a = ba.n;
  t.n_b = bb.n;
  return t;
}

}  // namespace

std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

namespace {

const PhaseAnalysis& first_phase(const SideRuns& side) { return phase_of(side, 0); }

// One pair of runs that took turns: epoch k of A against epoch k of B. False (pc untouched) when
// the runs' phases have different epoch counts or fewer than three epochs with steady steps.
bool epoch_pair_phase(PhaseComparison& pc, const SideRuns& a, const SideRuns& b,
                      const stats::RatioTestOptions& rto) {
  const PhaseAnalysis& fa = first_phase(a);
  const PhaseAnalysis& fb = first_phase(b);
  const PhaseEpochs ea = phase_epochs(*a.files[0], pc.phase, fa.warmup_steps);
  const PhaseEpochs eb = phase_epochs(*b.files[0], pc.phase, fb.warmup_steps);
  if (ea.mean_ms.size() != eb.mean_ms.size()) return false;
  const auto steady = epoch_pair_test(ea.steady_median_ms, eb.steady_median_ms, rto);
  const auto whole = epoch_pair_test(ea.mean_ms, eb.mean_ms, rto);
  if (!steady || !whole) return false;
  pc.unit = ReplicationUnit::kEpochPairs;
  pc.paired = true;
  pc.median_a_ms = fa.steady.median_ms;
  pc.median_b_ms = fb.steady.median_ms;
  pc.test = *steady;
  pc.epoch_pairs = steady->n_a;
  pc.whole_mean_a_ms = fa.all.mean_ms;
  pc.whole_mean_b_ms = fb.all.mean_ms;
  pc.whole_test = *whole;
  return true;
}

// The counted events of one step, one value per count of kProbeCounts that has a per-step
// source (-1 where its section is absent): two steps carried the same events when these agree.
std::vector<int64_t> step_events(const StepRecord& s) {
  std::vector<int64_t> out;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.source.value == nullptr) continue;
    out.push_back(f.source.present != nullptr && !f.source.present(s) ? -1 : f.source.value(s));
  }
  return out;
}

// A turn dominates its phase when it takes this many times its steady steps on either side: a
// compile takes hundreds of steps' time, noise a few.
constexpr double kDominantTurn = 10.0;
// ... and the dominant turns together take at least this share of the phase, both sides.
constexpr double kDominantShare = 0.2;

// The turns left out of the whole-phase test: dominant, with the same counted events at every
// step on both sides. Empty (`pairs` 0) unless they carry kDominantShare of the phase.
struct MatchedTurns {
  std::vector<char> left_out;
  int64_t pairs = 0;
  double a_ms = 0.0;
  double b_ms = 0.0;
  double share = 0.0;
};

template <class Turns, class View>
MatchedTurns matched_compile_turns(const Turns& turns, const ColumnarRun& ra, const ColumnarRun& rb,
                                   double steady_a_ms, double steady_b_ms, int64_t every,
                                   View view) {
  MatchedTurns out;
  out.left_out.assign(turns.size(), 0);
  double total = 0.0;
  for (size_t k = 0; k < turns.size(); ++k) {
    const auto [sum_a, sum_b, steps] = view(turns[k]);
    total += sum_a + sum_b;
    const double turn = static_cast<double>(every);
    if (!(sum_a > kDominantTurn * steady_a_ms * turn ||
          sum_b > kDominantTurn * steady_b_ms * turn)) {
      continue;
    }
    bool same = true;
    for (size_t i : *steps)
      same = same && step_events(ra.steps.at(i)) == step_events(rb.steps.at(i));
    if (!same) continue;  // the counted cost prices the events that differ
    out.left_out[k] = 1;
    ++out.pairs;
    out.a_ms += sum_a;
    out.b_ms += sum_b;
  }
  out.share = total > 0.0 ? (out.a_ms + out.b_ms) / total : 0.0;
  if (out.pairs == 0 || out.share < kDominantShare)
    return MatchedTurns{std::vector<char>(turns.size(), 0)};
  return out;
}

// The matched compiles' durations, judged against the calibrated spread of a compile's time when
// there is one; said either way (caveats::MatchedCompiles).
void judge_matched_compiles(PhaseComparison& pc, const MatchedTurns& m, const CompareOptions& o,
                            Warnings& warnings) {
  pc.matched_compile_pairs = m.pairs;
  pc.matched_compile_ratio = m.b_ms / m.a_ms;
  caveats::MatchedCompiles c{pc.phase, m.pairs, m.a_ms, m.b_ms, m.share, o.compile_spread, false};
  if (o.compile_spread && m.a_ms > 0.0 && m.b_ms > 0.0) {
    // Each pair's log ratio has the calibrated spread; their sum's ratio, that over sqrt(pairs).
    const double se = *o.compile_spread / std::sqrt(static_cast<double>(m.pairs));
    stats::RatioTest t = stats::ratio_test_from_log(std::log(m.b_ms / m.a_ms), se,
                                                    o.compile_spread_df, o.ratio_test());
    t.n_a = t.n_b = m.pairs;
    c.beyond_spread = t.p < o.alpha && std::abs(t.ratio - 1.0) > o.threshold;
    pc.compile_time_test = t;
  }
  warnings.add(c);
}

// Steps per turn when both runs took turns step by step with the same grain, else 0.
int64_t shared_turn_steps(const ColumnarRun& a, const ColumnarRun& b) {
  const int64_t every = a.header.turn_every_steps;
  return every > 0 && every == b.header.turn_every_steps ? every : 0;
}

int64_t shared_turn_steps(const SideRuns& a, const SideRuns& b) {
  return shared_turn_steps(*a.files[0], *b.files[0]);
}

// Calls f(i, steady) for each step index i in `phase` in both runs of a pair that took turns
// (steps paired by their place in the run files), `steady` when it is past both runs' warm-up.
template <typename F>
void for_each_step_pair(const ColumnarRun& ra, const ColumnarRun& rb, const PhaseAnalysis& fa,
                        const PhaseAnalysis& fb, int phase, F&& f) {
  PackedColumn::Reader phase_a(ra.steps.phase_column());
  PackedColumn::Reader phase_b(rb.steps.phase_column());
  int64_t position_a = 0;  // within the phase
  int64_t position_b = 0;
  const size_t n = std::min(ra.steps.size(), rb.steps.size());
  for (size_t i = 0; i < n; ++i) {
    const bool in_a = phase_a(i) == phase;
    const bool in_b = phase_b(i) == phase;
    const bool steady_a = in_a && position_a++ >= fa.warmup_steps;
    const bool steady_b = in_b && position_b++ >= fb.warmup_steps;
    if (in_a && in_b) f(i, steady_a && steady_b);
  }
}

// B/A of one pair that took turns step by step: the median over the phase's steady steps of B's
// step k over A's step k, which ran a turn apart at most. What the machine did fell on both steps
// of a step pair and cancels in it, where each run's own median may sit on either of two levels
// it jumped between (a run half on each). 0 with fewer than 3 such steps.
double step_paired_ratio(const ColumnarRun& ra, const ColumnarRun& rb, const PhaseAnalysis& fa,
                         const PhaseAnalysis& fb, int phase) {
  std::vector<double> logs;
  for_each_step_pair(ra, rb, fa, fb, phase, [&](size_t i, bool steady) {
    const double ta = ra.steps.wall_ms(i);
    const double tb = rb.steps.wall_ms(i);
    if (steady && ta > 0.0 && tb > 0.0) logs.push_back(std::log(tb / ta));
  });
  return logs.size() < 3 ? 0.0 : std::exp(stats::median(logs));
}

// Each pair's step_paired_ratio(), in pair order, where every pair's headers record the same turn
// grain of steps (shared_turn_steps()); empty where one does not, or has too few steady steps.
std::vector<double> step_paired_ratios(const SideRuns& a, const SideRuns& b, int phase) {
  std::vector<double> ratios;
  for (size_t i = 0; i < a.files.size() && i < b.files.size(); ++i) {
    if (shared_turn_steps(*a.files[i], *b.files[i]) == 0) return {};
    const double r =
        step_paired_ratio(*a.files[i], *b.files[i], phase_of(a, i), phase_of(b, i), phase);
    if (!(r > 0.0) || !std::isfinite(r)) return {};
    ratios.push_back(r);
  }
  return ratios;
}

// One pair of runs that took turns every `every` steps: A's turn k against B's turn k, which ran
// next to each other. Steps are paired by their place in the run files (the turns count steps from
// the first), within the phase in both. False (pc untouched) with fewer than three turns paired.
bool step_pair_phase(PhaseComparison& pc, const SideRuns& a, const SideRuns& b, int64_t every,
                     const CompareOptions& o, Warnings& warnings) {
  const stats::RatioTestOptions rto = o.ratio_test();
  const PhaseAnalysis& fa = first_phase(a);
  const PhaseAnalysis& fb = first_phase(b);
  const ColumnarRun& ra = *a.files[0];
  const ColumnarRun& rb = *b.files[0];
  // Per turn: the steady steps of each side, every step's sum, and its steps' indices.
  struct Turn {
    std::vector<double> steady_a, steady_b;
    double sum_a = 0.0, sum_b = 0.0;
    std::vector<size_t> steps;
  };
  std::vector<Turn> turns;
  for_each_step_pair(ra, rb, fa, fb, pc.phase, [&](size_t i, bool steady) {
    const auto k = static_cast<size_t>(static_cast<int64_t>(i) / every);
    if (turns.size() <= k) turns.resize(k + 1);
    Turn& t = turns[k];
    t.sum_a += ra.steps.wall_ms(i);
    t.sum_b += rb.steps.wall_ms(i);
    t.steps.push_back(i);
    if (steady) {
      t.steady_a.push_back(ra.steps.wall_ms(i));
      t.steady_b.push_back(rb.steps.wall_ms(i));
    }
  });
  // The turns that dominate the phase with the same counted events on both sides (a first
  // compile): one observation each, left out of the whole-phase sums and judged on their own.
  const MatchedTurns matched = matched_compile_turns(
      turns, ra, rb, fa.steady.median_ms, fb.steady.median_ms, every,
      [](const Turn& t) { return std::make_tuple(t.sum_a, t.sum_b, &t.steps); });
  std::vector<double> logs;
  std::vector<double> sums_a, sums_b;
  for (size_t k = 0; k < turns.size(); ++k) {
    Turn& t = turns[k];
    if (t.sum_a > 0.0 && t.sum_b > 0.0 && std::isfinite(t.sum_a) && std::isfinite(t.sum_b) &&
        !matched.left_out[k]) {
      sums_a.push_back(t.sum_a);
      sums_b.push_back(t.sum_b);
    }
    if (t.steady_a.empty()) continue;
    const double ma = stats::median(t.steady_a);
    const double mb = stats::median(t.steady_b);
    const double log_ratio = ma > 0.0 && mb > 0.0 ? std::log(mb / ma) : 0.0;
    if (ma > 0.0 && mb > 0.0 && std::isfinite(log_ratio)) logs.push_back(log_ratio);
  }
  if (logs.size() < 3 || sums_a.size() < 3) return false;
  const stats::PairedBlocksTest steady = stats::paired_blocks_ratio_test(logs, kEpochTrim, rto);
  // The whole phase in blocks of as many turns as the steady test's blocks.
  const auto length = static_cast<size_t>(steady.block_length);
  std::vector<double> block_a, block_b;
  for (size_t k = 0; k < sums_a.size(); ++k) {
    if (k % length == 0 && sums_a.size() - k >= length) {
      block_a.push_back(0.0);
      block_b.push_back(0.0);
    }
    block_a.back() += sums_a[k];
    block_b.back() += sums_b[k];
  }
  if (block_a.size() < 2) return false;
  for (size_t k = 0; k < block_a.size(); ++k) {
    if (!std::isfinite(block_a[k]) || !std::isfinite(block_b[k])) return false;  // overflowed
  }
  pc.unit = ReplicationUnit::kStepPairs;
  pc.paired = true;
  pc.median_a_ms = fa.steady.median_ms;
  pc.median_b_ms = fb.steady.median_ms;
  pc.test = steady.test;
  pc.step_pairs = steady.pairs;
  pc.pair_blocks = steady.blocks;
  pc.pair_block_length = steady.block_length;
  pc.turn_steps = every;
  pc.whole_mean_a_ms = fa.all.mean_ms;
  pc.whole_mean_b_ms = fb.all.mean_ms;
  pc.whole_test = stats::ratio_of_sums_test(block_a, block_b, rto);
  if (matched.pairs > 0) judge_matched_compiles(pc, matched, o, warnings);
  return true;
}

// One run per side that did not take turns: blocks of consecutive steps, resampled, with the
// measured run-to-run spread added (none measured: nothing is proven).
void block_phase(PhaseComparison& pc, const SideRuns& a, const SideRuns& b, const CompareOptions& o,
                 Warnings& warnings) {
  const int phase = pc.phase;
  const PhaseAnalysis& fa = first_phase(a);
  const PhaseAnalysis& fb = first_phase(b);
  const stats::RatioTestOptions rto = o.ratio_test();
  pc.unit = ReplicationUnit::kBlocks;
  pc.median_a_ms = fa.steady.median_ms;
  pc.median_b_ms = fb.steady.median_ms;
  // Every step of the phase in step order; its steady steps are those after the warm-up.
  const std::vector<double> all_a = phase_series(*a.files[0], phase);
  const std::vector<double> all_b = phase_series(*b.files[0], phase);
  const stats::StepBlocks ba = steady_blocks(all_a, *a.files[0], fa.warmup_steps);
  const stats::StepBlocks bb = steady_blocks(all_b, *b.files[0], fb.warmup_steps);
  pc.block_steps_a = ba.block_length;
  pc.block_steps_b = bb.block_length;
  // Only an interval can be too narrow: without a measured spread there is none. One warning
  // names both runs.
  caveats::IntervalTooNarrow narrow{phase, {}, std::max(ba.block_length, bb.block_length)};
  for (const auto* blocks : {&ba, &bb}) {
    if (blocks->autocorrelation_capped && o.run_noise) {
      narrow.paths.push_back((blocks == &ba ? a : b).files[0]->path);
    }
  }
  if (!narrow.paths.empty()) warnings.add(narrow);
  const double log_ratio = std::log(pc.median_b_ms / pc.median_a_ms);
  pc.level_spread = std::max(level_spread(ba), level_spread(bb));
  pc.noise_contradicted = o.run_noise && pc.level_spread > kLevelJumps &&
                          pc.level_spread > kContradiction * *o.run_noise;
  if (pc.noise_contradicted) {
    warnings.add(caveats::LevelsBeyondNoise{phase, pc.level_spread, *o.run_noise});
  }
  if (ba.sorted_log_medians.size() < 3 || bb.sorted_log_medians.size() < 3 ||
      pc.noise_contradicted) {
    // Too few steady steps to say anything about the noise: nothing is proven.
    pc.test.ratio = std::exp(log_ratio);
    pc.test.low = 0.0;
    pc.test.high = std::numeric_limits<double>::infinity();
    pc.test.se_log = std::numeric_limits<double>::infinity();
    pc.test.mde = std::numeric_limits<double>::infinity();
    pc.test.confidence = rto.confidence;
  } else {
    pc.test = stats::block_bootstrap_ratio_test(ba, bb, log_ratio, o.bootstrap, rto);
    // Each side's run also sits somewhere in the spread between runs, which the blocks of one
    // run cannot show: add the measured run-to-run variance of both medians, or prove nothing.
    const double run_noise = o.run_noise.value_or(std::numeric_limits<double>::infinity());
    const double se = std::sqrt(pc.test.se_log * pc.test.se_log + 2.0 * run_noise * run_noise);
    const int64_t n_a = pc.test.n_a;
    const int64_t n_b = pc.test.n_b;
    pc.test = stats::ratio_test_from_log(log_ratio, se, std::min(pc.test.df, o.run_noise_df), rto);
    pc.test.n_a = n_a;
    pc.test.n_b = n_b;
  }
  pc.whole_mean_a_ms = fa.all.mean_ms;
  pc.whole_mean_b_ms = fb.all.mean_ms;
  pc.whole_test = whole_phase_blocks_test(
      all_a, all_b, std::max({epoch_steps(a.files[0]->header), pc.block_steps_a, pc.block_steps_b}),
      pc.noise_contradicted ? std::nullopt : o.run_noise, o.run_noise_df, rto);
}

}  // namespace

PhaseComparison compare_phase_timing(int phase, const SideRuns& a, const SideRuns& b,
                                     const CompareOptions& o, Warnings& warnings) {
  PhaseComparison pc;
  pc.phase = phase;
  const PhaseAnalysis& fa = phase_of(a, 0);
  const PhaseAnalysis& fb = phase_of(b, 0);
  for (size_t i = 0; i < a.analyses.size(); ++i) {
    pc.n_a += phase_of(a, i).steady.n;
    pc.run_medians_a_ms.push_back(phase_of(a, i).steady.median_ms);
  }
  for (size_t i = 0; i < b.analyses.size(); ++i) {
    pc.n_b += phase_of(b, i).steady.n;
    pc.run_medians_b_ms.push_back(phase_of(b, i).steady.median_ms);
  }
  pc.p95_a_ms = fa.steady.p95_ms;
  pc.p95_b_ms = fb.steady.p95_ms;
  pc.mann_whitney =
      stats::mann_whitney_u_sorted(fa.steady_sorted_ms, fb.steady_sorted_ms, o.min_samples);
  const stats::RatioTestOptions rto = o.ratio_test();
  for (const auto* side : {&a, &b}) {
    for (size_t i = 0; i < side->analyses.size(); ++i) {
      if (!(phase_of(*side, i).steady.median_ms > 0.0)) {
        throw InputError(side->analyses[i].path + ": phase " + std::to_string(phase) +
                         "'s steady median step time is 0 ms; a ratio of step times needs "
                         "positive times");
      }
    }
  }
  if (a.analyses.size() >= 2 || b.analyses.size() >= 2) {
    pc.unit = ReplicationUnit::kRuns;
    pc.paired = (o.paired || o.turns) && a.analyses.size() == b.analyses.size();
    auto runs_test = [&](const std::vector<double>& va, const std::vector<double>& vb,
                         bool levels) {
      stats::RatioTest t =
          pc.paired ? stats::paired_ratio_test(va, vb, rto) : stats::run_ratio_test(va, vb, rto);
      if (levels) bound_by_permutation(t, va, vb, pc.paired);
      return t;
    };
    pc.median_a_ms = geometric_mean(pc.run_medians_a_ms);
    pc.median_b_ms = geometric_mean(pc.run_medians_b_ms);
    // Where the runs' own step times jumped between levels, their medians may sit on two: the
    // exact permutation test bounds the t test (bound_by_permutation), unless the pairs took
    // turns step by step (levels_bound_runs).
    for (const SideRuns* side : {&a, &b}) {
      for (size_t i = 0; i < side->analyses.size(); ++i) {
        const ColumnarRun& run = *side->files[i];
        pc.level_spread =
            std::max(pc.level_spread, level_spread(steady_blocks(phase_series(run, phase), run,
                                                                 phase_of(*side, i).warmup_steps)));
      }
    }
    const std::vector<double> by_steps =
        o.turns && pc.paired ? step_paired_ratios(a, b, phase) : std::vector<double>();
    pc.pairs_by_steps = !by_steps.empty();
    const bool levels = levels_bound_runs(pc);
    pc.test = pc.pairs_by_steps
                  ? runs_test(std::vector<double>(by_steps.size(), 1.0), by_steps, false)
                  : runs_test(pc.run_medians_a_ms, pc.run_medians_b_ms, levels);
    // The whole phase: each run's mean over every step.
    std::vector<double> wa, wb;
    for (size_t i = 0; i < a.analyses.size(); ++i) wa.push_back(phase_of(a, i).all.mean_ms);
    for (size_t i = 0; i < b.analyses.size(); ++i) wb.push_back(phase_of(b, i).all.mean_ms);
    pc.whole_mean_a_ms = geometric_mean(wa);
    pc.whole_mean_b_ms = geometric_mean(wb);
    pc.whole_test = runs_test(wa, wb, levels);
  } else if (const int64_t every = o.turns ? shared_turn_steps(a, b) : 0;
             !(every > 0 && step_pair_phase(pc, a, b, every, o, warnings)) &&
             !(o.turns && epoch_pair_phase(pc, a, b, rto))) {
    block_phase(pc, a, b, o, warnings);
  }
  pc.ratio.ratio = pc.test.ratio;
  pc.ratio.low = pc.test.low;
  pc.ratio.high = pc.test.high;
  pc.ratio.confidence = pc.test.confidence;
  pc.ratio.resamples = pc.unit == ReplicationUnit::kBlocks ? o.bootstrap.resamples : 0;
  return pc;
}

namespace {

// The fewest runs per side whose exact permutation test (bound_by_permutation) can reach `alpha`:
// 4 against 4 (70 splits), or 6 pairs (64 sign flips), at 0.05.
int fewest_runs_to_decide(bool paired, double alpha) {
  for (int n = 2; n < 64; ++n) {
    double arrangements = 1.0;
    if (paired) {
      arrangements = std::ldexp(1.0, n);
    } else {
      for (int i = 1; i <= n; ++i) arrangements = arrangements * (n + i) / i;  // C(2n, n)
    }
    if (2.0 / arrangements < alpha) return n;
  }
  return 64;
}

}  // namespace

void judge_phases(std::vector<PhaseComparison>& phases, const std::vector<CountedCost>& counted,
                  const CompareOptions& o) {
  // One family: the steady and the whole-phase test of every phase.
  std::vector<double> p, tost;
  for (const PhaseComparison& pc : phases) {
    p.push_back(pc.test.p);
    tost.push_back(pc.test.tost_p);
  }
  for (const PhaseComparison& pc : phases) p.push_back(pc.whole_test.p);
  const std::vector<double> p_holm = stats::holm_adjust(p);
  const std::vector<double> tost_holm = stats::holm_adjust(tost);
  const stats::RatioTestOptions rto = o.ratio_test();
  for (size_t i = 0; i < phases.size(); ++i) {
    PhaseComparison& pc = phases[i];
    pc.p_holm = p_holm[i];
    pc.whole_p_holm = p_holm[phases.size() + i];
    pc.tost_p_holm = tost_holm[i];
    const CountedCost* cost = nullptr;
    for (const CountedCost& cc : counted) {
      if (cc.phase == pc.phase) cost = &cc;
    }
    const double r = pc.test.ratio;
    const bool significant = pc.p_holm < o.alpha;
    const double w = pc.whole_test.ratio;
    const bool whole_significant = pc.whole_p_holm < o.alpha;
    const bool counted_regresses = cost && cost->verdict == Verdict::kRegression;
    const bool counted_improves = cost && cost->verdict == Verdict::kImprovement;
    // The same compiles, their times beyond how a compile's time spreads here (calibrated).
    const auto& ct = pc.compile_time_test;
    const bool compile_time = ct && ct->p < o.alpha;
    const bool compile_slower = compile_time && ct->ratio > 1.0 + o.threshold;
    const bool compile_faster = compile_time && ct->ratio < 1.0 - o.threshold;
    if (r > 1.0 + o.threshold && significant) {
      pc.verdict = Verdict::kRegression;
    } else if (counted_regresses) {
      pc.verdict = Verdict::kRegression;
      pc.counted_decides = true;
    } else if (compile_slower) {
      pc.verdict = Verdict::kRegression;
      pc.compile_time_decides = true;
    } else if (w > 1.0 + o.threshold && whole_significant) {
      pc.verdict = Verdict::kRegression;
      pc.whole_decides = true;
    } else if (r < 1.0 - o.threshold && significant) {
      pc.verdict = Verdict::kImprovement;
    } else if (counted_improves) {
      pc.verdict = Verdict::kImprovement;
      pc.counted_decides = true;
    } else if (compile_faster) {
      pc.verdict = Verdict::kImprovement;
      pc.compile_time_decides = true;
    } else if (w < 1.0 - o.threshold && whole_significant) {
      pc.verdict = Verdict::kImprovement;
      pc.whole_decides = true;
    } else if (pc.tost_p_holm < o.alpha) {
      pc.verdict = Verdict::kNoChange;
      pc.equivalent = true;
    } else if (pc.unit == ReplicationUnit::kBlocks && !o.run_noise) {
      pc.verdict = Verdict::kInconclusive;
      pc.runs_needed = 3;
    } else if (pc.noise_contradicted) {
      pc.verdict = Verdict::kInconclusive;
      pc.runs_needed = 3;
    } else {
      pc.verdict = Verdict::kInconclusive;
      const int runs =
          static_cast<int>(std::min(pc.run_medians_a_ms.size(), pc.run_medians_b_ms.size()));
      pc.runs_needed = std::isfinite(pc.test.se_log) ? stats::runs_needed(pc.test.se_log, runs, rto)
                                                     : std::max(runs + 1, 3);
      if (pc.unit == ReplicationUnit::kRuns && levels_bound_runs(pc)) {
        pc.runs_needed = std::max(pc.runs_needed, fewest_runs_to_decide(pc.paired, o.alpha));
      }
    }
    pc.decisive_ratio = pc.counted_decides        ? 1.0 + cost->share
                        : pc.compile_time_decides ? ct->ratio
                        : pc.whole_decides        ? pc.whole_test.ratio
                                                  : pc.ratio.ratio;
  }
}

}  // namespace recompdiag::detail
