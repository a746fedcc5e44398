// The gate's statistics against known values: Student's t, Holm, TOST, Welch on runs, and the
// block bootstrap's coverage on an autocorrelated series where the step-level interval fails.

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "recompdiag/core/statistics.h"

using namespace recompdiag::stats;

namespace {

/// AR(1) on the log scale: x_t = phi x_{t-1} + e_t, stationary from the first step; step times
/// median * exp(x_t). Its median is `median` whatever phi is.
std::vector<double> ar1_steps(std::mt19937_64& gen, size_t n, double median, double phi,
                              double sigma) {
  std::normal_distribution<double> normal(0.0, sigma * std::sqrt(1.0 - phi * phi));
  std::normal_distribution<double> start(0.0, sigma);
  std::vector<double> out;
  double x = start(gen);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(median * std::exp(x));
    x = phi * x + normal(gen);
  }
  return out;
}

}  // namespace

TEST_CASE("Student's t and the normal quantile match the tables") {
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(normal_quantile(0.05) == doctest::Approx(-1.644854).epsilon(1e-6));
  CHECK(student_t_quantile(0.975, 10) == doctest::Approx(2.228139).epsilon(1e-6));
  CHECK(student_t_quantile(0.95, 5) == doctest::Approx(2.015048).epsilon(1e-6));
  CHECK(student_t_quantile(0.975, 1) == doctest::Approx(12.7062).epsilon(1e-5));
  CHECK(student_t_quantile(0.025, 10) == doctest::Approx(-2.228139).epsilon(1e-6));
  // Two-sided p of t = 2 with 5 degrees of freedom is 0.1019.
  CHECK(2 * student_t_upper_tail(2.0, 5) == doctest::Approx(0.101939).epsilon(1e-5));
  CHECK(student_t_upper_tail(0.0, 7) == doctest::Approx(0.5));
  CHECK(student_t_upper_tail(1.5, INFINITY) == doctest::Approx(normal_upper_tail(1.5)));
}

TEST_CASE("Holm's adjustment: the textbook example") {
  // m = 4; sorted 0.005, 0.01, 0.03, 0.04 -> 4x, 3x, 2x, 1x = 0.02, 0.03, 0.06, 0.04, made
  // monotone: 0.02, 0.03, 0.06, 0.06.
  const std::vector<double> adjusted = holm_adjust({0.01, 0.04, 0.03, 0.005});
  REQUIRE(adjusted.size() == 4);
  CHECK(adjusted[0] == doctest::Approx(0.03));
  CHECK(adjusted[1] == doctest::Approx(0.06));
  CHECK(adjusted[2] == doctest::Approx(0.06));
  CHECK(adjusted[3] == doctest::Approx(0.02));
  CHECK(holm_adjust({0.6, 0.5})[0] == 1.0);  // capped at 1
  CHECK(holm_adjust({}).empty());
}

TEST_CASE("TOST: equivalence proven exactly at the t table's 2.5% point") {
  RatioTestOptions o;
  o.threshold = 0.05;
  const double se = 0.01;
  // The estimate sits 2.228139 standard errors below the upper margin log(1.05), far above the
  // lower one: the upper one-sided test has p = 0.025 with 10 degrees of freedom.
  const double log_ratio = std::log(1.05) - 2.228139 * se;
  RatioTest t = ratio_test_from_log(log_ratio, se, 10, o);
  CHECK(t.tost_p == doctest::Approx(0.025).epsilon(1e-4));
  // The interval at 95% has the same t point: its upper end touches the margin.
  CHECK(t.high == doctest::Approx(1.05).epsilon(1e-6));
  // Centred between the margins with a wide interval: nothing is proven.
  RatioTest wide = ratio_test_from_log(0.0, 0.05, 10, o);
  CHECK(wide.tost_p > 0.05);
  CHECK(wide.p == doctest::Approx(1.0));
  // Minimum detectable effect: (t_0.975 + t_0.80) standard errors.
  const double z = student_t_quantile(0.975, 10) + student_t_quantile(0.8, 10);
  CHECK(wide.mde == doctest::Approx(std::expm1(z * 0.05)));
}

TEST_CASE("runs as the unit: Welch's standard error and degrees of freedom on the logs") {
  // logs of A: 0, 0.02, 0.04 (variance 0.0004); of B: 0.10, 0.13, 0.16 (variance 0.0009).
  const std::vector<double> a = {1.0, std::exp(0.02), std::exp(0.04)};
  const std::vector<double> b = {std::exp(0.10), std::exp(0.13), std::exp(0.16)};
  RatioTest t = run_ratio_test(a, b);
  CHECK(t.n_a == 3);
  CHECK(t.n_b == 3);
  CHECK(t.ratio == doctest::Approx(std::exp(0.11)));
  CHECK(t.se_log == doctest::Approx(std::sqrt(0.0004 / 3 + 0.0009 / 3)));
  CHECK(t.df == doctest::Approx(3.4845).epsilon(1e-3));
  CHECK(t.p == doctest::Approx(2 * student_t_upper_tail(0.11 / t.se_log, t.df)));
  CHECK(t.p < 0.05);
  // One new run against three stored ones: A's variance stands for both, df = 2.
  RatioTest one = run_ratio_test(a, {std::exp(0.11)});
  CHECK(one.df == doctest::Approx(2.0));
  CHECK(one.se_log == doctest::Approx(std::sqrt(0.0004 * (1.0 / 3 + 1.0))));
  CHECK_THROWS(run_ratio_test({1.0}, {1.1}));
  CHECK_THROWS(run_ratio_test({1.0, 0.0}, {1.1, 1.2}));
}

TEST_CASE("pairs as the unit: a load the pair shared cancels") {
  // Each pair ran on a machine loaded differently (x1, x1.5, x2), B 10% slower in every pair
  // give or take 1%: Welch on the sides sees the load, the paired test only the ratios.
  const std::vector<double> a = {10.0, 15.0, 20.0};
  const std::vector<double> b = {10.0 * std::exp(0.09), 15.0 * std::exp(0.10),
                                 20.0 * std::exp(0.11)};
  const RatioTest paired = paired_ratio_test(a, b);
  CHECK(paired.n_a == 3);
  CHECK(paired.ratio == doctest::Approx(std::exp(0.10)));
  CHECK(paired.se_log == doctest::Approx(0.01 / std::sqrt(3.0)));
  CHECK(paired.df == doctest::Approx(2.0));
  CHECK(paired.p < 0.01);
  CHECK(run_ratio_test(a, b).p > 0.3);
  CHECK_THROWS(paired_ratio_test({1.0, 2.0}, {1.0}));
  CHECK_THROWS(paired_ratio_test({1.0}, {1.1}));
  CHECK_THROWS(paired_ratio_test({1.0, -1.0}, {1.1, 1.2}));
}

TEST_CASE("runs needed: more noise needs more runs, a noiseless pair needs the minimum") {
  RatioTestOptions o;
  o.threshold = 0.05;
  const int few = runs_needed(0.01, 1, o);
  const int many = runs_needed(0.04, 1, o);
  CHECK(few >= 2);
  CHECK(many > few);
  CHECK(runs_needed(0.0, 3, o) == 3);
  CHECK(runs_needed(10.0, 1, o, 50) == 50);
}

TEST_CASE("block bootstrap covers the true ratio about 95% of the time; single steps do not") {
  // Steps that share the machine's state for a while: AR(1) with phi = 0.9 on the log scale.
  // B's true median is 1.10 x A's. Resampling single steps treats 400 correlated steps as 400
  // independent ones and its interval is far too narrow.
  std::mt19937_64 gen(12345);
  const double true_ratio = 1.10;
  const int trials = 300;
  int block_covers = 0;
  int step_covers = 0;
  BootstrapOptions boot;
  boot.resamples = 400;
  for (int i = 0; i < trials; ++i) {
    const std::vector<double> a = ar1_steps(gen, 400, 10.0, 0.9, 0.05);
    const std::vector<double> b = ar1_steps(gen, 400, 10.0 * true_ratio, 0.9, 0.05);
    const double log_ratio = std::log(median(b) / median(a));
    RatioTest block =
        block_bootstrap_ratio_test(make_step_blocks(a), make_step_blocks(b), log_ratio, boot);
    block_covers += block.low <= true_ratio && true_ratio <= block.high;
    boot.seed = static_cast<uint64_t>(i) + 1;
    RatioInterval steps = bootstrap_median_ratio(a, b, boot);
    step_covers += steps.low <= true_ratio && true_ratio <= steps.high;
  }
  const double block_coverage = static_cast<double>(block_covers) / trials;
  const double step_coverage = static_cast<double>(step_covers) / trials;
  INFO("block coverage " << block_coverage << ", step-level coverage " << step_coverage);
  CHECK(block_coverage >= 0.90);
  CHECK(block_coverage <= 0.995);
  CHECK(step_coverage < 0.75);
}

TEST_CASE("step blocks: the block length follows the autocorrelation") {
  std::mt19937_64 gen(7);
  std::vector<double> independent = ar1_steps(gen, 800, 10.0, 0.0, 0.05);
  std::vector<double> sticky = ar1_steps(gen, 800, 10.0, 0.95, 0.05);
  const StepBlocks bi = make_step_blocks(independent);
  const StepBlocks bs = make_step_blocks(sticky);
  CHECK(bi.autocorrelation_lag <= 2);
  CHECK(bs.autocorrelation_lag > 10);
  CHECK(bs.block_length > bi.block_length);
  CHECK(bs.sorted_log_medians.size() >= 8);
  // An epoch is the shortest block when asked.
  CHECK(make_step_blocks(independent, 10).block_length >= 10);
  CHECK(make_step_blocks({}).sorted_log_medians.empty());
}

TEST_CASE("trimmed paired test: a few pairs hit by a burst of load do not swamp the rest") {
  // 30 pairs agree within about 1%, B 2% above A; four are hit by +-40% on one side only.
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(10.0);
    b.push_back(10.2 * (1.0 + 0.01 * ((i % 5) - 2) / 2.0));
  }
  b[3] *= 1.4;
  b[11] *= 0.6;
  a[17] *= 1.4;
  a[25] *= 0.6;
  const RatioTest plain = paired_ratio_test(a, b);
  const RatioTest trimmed = trimmed_paired_ratio_test(a, b, 0.2);
  CHECK(trimmed.ratio == doctest::Approx(1.02).epsilon(0.005));
  CHECK(trimmed.df == 30 - 2 * 6 - 1);
  // The plain t's interval is several times wider and cannot prove the change within 5%.
  CHECK(std::log(plain.high / plain.low) > 4.0 * std::log(trimmed.high / trimmed.low));
  CHECK(trimmed.tost_p < 0.05);
  CHECK(plain.tost_p > 0.05);
  // trim 0 is the plain paired t.
  const RatioTest zero = trimmed_paired_ratio_test(a, b, 0.0);
  CHECK(zero.ratio == doctest::Approx(plain.ratio));
  CHECK(zero.se_log == doctest::Approx(plain.se_log));
  CHECK_THROWS(trimmed_paired_ratio_test(a, b, 0.5));
  CHECK_THROWS(trimmed_paired_ratio_test({1.0}, {1.1}));
  // Three pairs keep them all (nothing to trim at 20%).
  CHECK(trimmed_paired_ratio_test({1, 2, 3}, {1.1, 2.2, 3.3}).df == 2);
}

TEST_CASE("arm ratio: says when the rounds cannot tell, and how many would") {
  // Paired rounds whose log ratios alternate +-0.05 around log(1.02): the interval is far wider
  // than the 2% effect and includes 1.0.
  std::vector<double> base, noisy;
  for (int i = 0; i < 10; ++i) {
    base.push_back(10.0);
    noisy.push_back(10.0 * 1.02 * std::exp(i % 2 == 0 ? 0.05 : -0.05));
  }
  const ArmRatio unsure = arm_ratio(base, noisy);
  CHECK(unsure.test.ratio == doctest::Approx(1.02).epsilon(1e-9));
  CHECK(unsure.includes_one);
  CHECK(unsure.wider_than_effect);
  // Yuen's standard error with 6 of 10 rounds kept is that of a sigma of 0.0707 (the winsorized
  // 0.0527 times sqrt(9 / 5)); the width 2 * 1.96 * 0.0707 / sqrt(kept) reaches the effect,
  // log(1.02) = 0.0198, at about 196 kept: some 330 rounds.
  CHECK(unsure.rounds_to_settle > 300);
  CHECK(unsure.rounds_to_settle < 360);
  // Settled at that many rounds: the interval is then no wider than the effect.
  std::vector<double> more_base, more;
  for (int i = 0; i < unsure.rounds_to_settle; ++i) {
    more_base.push_back(10.0);
    more.push_back(10.0 * 1.02 * std::exp(i % 2 == 0 ? 0.05 : -0.05));
  }
  const ArmRatio settled = arm_ratio(more_base, more);
  CHECK_FALSE(settled.includes_one);
  CHECK_FALSE(settled.wider_than_effect);

  // A 20% effect with the same noise: the interval excludes 1.0 and is narrower than the effect.
  std::vector<double> clear;
  for (int i = 0; i < 10; ++i) clear.push_back(10.0 * 1.2 * std::exp(i % 2 == 0 ? 0.01 : -0.01));
  const ArmRatio sure = arm_ratio(base, clear);
  CHECK_FALSE(sure.includes_one);
  CHECK_FALSE(sure.wider_than_effect);
  CHECK(sure.rounds_to_settle <= 10);

  // No effect at all never settles: the cap.
  std::vector<double> same;
  for (int i = 0; i < 10; ++i) same.push_back(10.0 * std::exp(i % 2 == 0 ? 0.01 : -0.01));
  CHECK(arm_ratio(base, same, 0.2, {}, 5000).rounds_to_settle == 5000);
  CHECK_THROWS(arm_ratio({1.0}, {1.1}));
}
