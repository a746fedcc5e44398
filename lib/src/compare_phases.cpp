// Per-phase timing tests of compare_run_sets(): runs as the unit when a side has several, else
// the block bootstrap; then Holm over the phases, TOST for "no change", and the verdicts.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "detail/compare_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag::detail {

namespace {

// A run's steady steps of one phase, in step order (the analysis keeps them sorted).
std::vector<double> steady_series(const RunFile& run, const PhaseAnalysis& pa) {
  std::vector<double> out;
  int64_t skipped = 0;
  for (const StepRecord& s : run.steps) {
    if (s.phase != pa.phase) continue;
    if (skipped < pa.warmup_steps) {
      ++skipped;
      continue;
    }
    out.push_back(s.wall_ms);
  }
  return out;
}

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

std::string format_p(double p) { return p < 0.001 ? "p < 0.001" : format_number("p = %.3f", p); }

}  // namespace

std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

PhaseComparison compare_phase_timing(int phase, const SideRuns& a, const SideRuns& b,
                                     const CompareOptions& o, std::vector<std::string>& warnings) {
  auto phase_of = [](const SideRuns& side, size_t i) -> const PhaseAnalysis& {
    return side.analyses[i].phases[side.phase_index[i]];
  };
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
    pc.median_a_ms = geometric_mean(pc.run_medians_a_ms);
    pc.median_b_ms = geometric_mean(pc.run_medians_b_ms);
    pc.test = stats::run_ratio_test(pc.run_medians_a_ms, pc.run_medians_b_ms, rto);
  } else {
    pc.unit = ReplicationUnit::kBlocks;
    pc.median_a_ms = fa.steady.median_ms;
    pc.median_b_ms = fb.steady.median_ms;
    const stats::StepBlocks ba =
        stats::make_step_blocks(steady_series(*a.files[0], fa), epoch_steps(a.files[0]->header));
    const stats::StepBlocks bb =
        stats::make_step_blocks(steady_series(*b.files[0], fb), epoch_steps(b.files[0]->header));
    pc.block_steps_a = ba.block_length;
    pc.block_steps_b = bb.block_length;
    for (const auto* blocks : {&ba, &bb}) {
      if (blocks->autocorrelation_capped) {
        warnings.push_back(
            "phase " + std::to_string(phase) + ": " + (blocks == &ba ? a : b).files[0]->path +
            "'s step times stay alike for more than " + std::to_string(blocks->block_length) +
            " steps (the longest block): the interval may be too narrow; compare several runs "
            "per side");
      }
    }
    const double log_ratio = std::log(pc.median_b_ms / pc.median_a_ms);
    if (ba.sorted_log_medians.size() < 3 || bb.sorted_log_medians.size() < 3) {
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
      // run cannot show: add the assumed run-to-run variance of both medians.
      const double se =
          std::sqrt(pc.test.se_log * pc.test.se_log + 2.0 * o.run_noise * o.run_noise);
      const int64_t n_a = pc.test.n_a;
      const int64_t n_b = pc.test.n_b;
      pc.test = stats::ratio_test_from_log(log_ratio, se, pc.test.df, rto);
      pc.test.n_a = n_a;
      pc.test.n_b = n_b;
    }
  }
  pc.ratio.ratio = pc.test.ratio;
  pc.ratio.low = pc.test.low;
  pc.ratio.high = pc.test.high;
  pc.ratio.confidence = pc.test.confidence;
  pc.ratio.resamples = pc.unit == ReplicationUnit::kBlocks ? o.bootstrap.resamples : 0;
  return pc;
}

void judge_phases(std::vector<PhaseComparison>& phases, const CompareOptions& o) {
  std::vector<double> p, tost;
  for (const PhaseComparison& pc : phases) {
    p.push_back(pc.test.p);
    tost.push_back(pc.test.tost_p);
  }
  const std::vector<double> p_holm = stats::holm_adjust(p);
  const std::vector<double> tost_holm = stats::holm_adjust(tost);
  const stats::RatioTestOptions rto = o.ratio_test();
  const std::string threshold = format_number("%.1f%%", o.threshold * 100.0);
  const std::string level = format_number("%g%%", o.bootstrap.confidence * 100.0);
  for (size_t i = 0; i < phases.size(); ++i) {
    PhaseComparison& pc = phases[i];
    pc.p_holm = p_holm[i];
    pc.tost_p_holm = tost_holm[i];
    const double r = pc.test.ratio;
    const std::string unit = pc.unit == ReplicationUnit::kRuns
                                 ? std::to_string(pc.run_medians_a_ms.size()) + " vs " +
                                       std::to_string(pc.run_medians_b_ms.size()) + " runs"
                                 : std::to_string(pc.test.n_a) + " vs " +
                                       std::to_string(pc.test.n_b) + " blocks of steps, " +
                                       format_number("%.1f%%", o.run_noise * 100.0) +
                                       " run-to-run spread assumed";
    const std::string figures =
        format_number("B/A %.3f", r) + " (" + level + format_number(" CI %.3f", pc.test.low) +
        format_number("-%.3f, ", pc.test.high) + format_p(pc.p_holm) + " Holm; " + unit +
        "; detectable " + format_number("%.1f%%", pc.test.mde * 100.0) + ")";
    const bool significant = pc.p_holm < o.alpha;
    if (r > 1.0 + o.threshold && significant) {
      pc.verdict = Verdict::kRegression;
      pc.reason = "slower beyond the " + threshold + " threshold: " + figures;
    } else if (r < 1.0 - o.threshold && significant) {
      pc.verdict = Verdict::kImprovement;
      pc.reason = "faster beyond the " + threshold + " threshold: " + figures;
    } else if (pc.tost_p_holm < o.alpha) {
      pc.verdict = Verdict::kNoChange;
      pc.equivalent = true;
      pc.reason = "equivalent within the " + threshold + " threshold (TOST " +
                  format_p(pc.tost_p_holm) + " Holm): " + figures;
    } else {
      pc.verdict = Verdict::kInconclusive;
      const int runs =
          static_cast<int>(std::min(pc.run_medians_a_ms.size(), pc.run_medians_b_ms.size()));
      pc.runs_needed = std::isfinite(pc.test.se_log) ? stats::runs_needed(pc.test.se_log, runs, rto)
                                                     : std::max(runs + 1, 3);
      pc.reason = "cannot be told from the " + threshold + " threshold at this noise: " + figures +
                  "; about " + std::to_string(pc.runs_needed) + " runs per side would settle it";
    }
  }
}

}  // namespace recompdiag::detail
