// Student's t, Holm's adjustment and the tests of B / A that compare.h judges phases with.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "recompdiag/core/statistics.h"

namespace recompdiag::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Continued fraction of the regularized incomplete beta function (modified Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  const double qab = a + b;
  const double qap = a + 1.0;
  const double qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-15) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

// Solves cdf(x) = p for an increasing cdf by bisection over [lo, hi].
template <typename Cdf>
double invert(Cdf cdf, double p, double lo, double hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Keeps a probability inside (0, 1) where a quantile exists: alpha = 1e-300 asks for a point
// beyond double precision.
double inside(double p) { return std::clamp(p, 1e-15, 1.0 - 1e-15); }

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("normal_quantile: p outside (0, 1)");
  return invert([](double z) { return 1.0 - normal_upper_tail(z); }, p, -40.0, 40.0);
}

double obrien_fleming_spent(double alpha, double t) {
  if (!(t > 0.0)) return 0.0;
  if (t >= 1.0) return alpha;
  return 2.0 * normal_upper_tail(normal_quantile(1.0 - alpha / 2.0) / std::sqrt(t));
}

double sequential_look_alpha(double alpha, int look, int looks) {
  if (!(alpha > 0.0 && alpha < 1.0) || look < 1 || looks < 1 || look > looks) {
    throw std::invalid_argument(
        "sequential_look_alpha: look outside [1, looks] or alpha outside (0, 1)");
  }
  const double t = static_cast<double>(look) / looks;
  const double before = static_cast<double>(look - 1) / looks;
  return obrien_fleming_spent(alpha, t) - obrien_fleming_spent(alpha, before);
}

double student_t_upper_tail(double t, double df) {
  if (!(df > 0.0)) throw std::invalid_argument("student_t_upper_tail: df <= 0");
  if (std::isinf(df)) return normal_upper_tail(t);
  const double tail = 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + t * t));
  return t >= 0.0 ? tail : 1.0 - tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("student_t_quantile: p outside (0, 1)");
  if (std::isinf(df)) return normal_quantile(p);
  return invert([df](double t) { return 1.0 - student_t_upper_tail(t, df); }, p, -1e6, 1e6);
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return p[i] < p[j]; });
  std::vector<double> out(m);
  double running = 0.0;
  for (size_t rank = 0; rank < m; ++rank) {
    const double scaled = std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]);
    running = std::max(running, scaled);
    out[order[rank]] = running;
  }
  return out;
}

RatioTest ratio_test_from_log(double log_ratio, double se_log, double df,
                              const RatioTestOptions& o) {
  RatioTest t;
  t.ratio = std::exp(log_ratio);
  t.confidence = o.confidence;
  t.se_log = se_log;
  t.df = df;
  const double upper = std::log1p(o.threshold);
  const double lower = o.threshold < 1.0 ? std::log1p(-o.threshold) : -kInf;
  if (!(se_log > 0.0)) {
    t.low = t.high = t.ratio;
    t.p = log_ratio == 0.0 ? 1.0 : 0.0;
    t.tost_p = log_ratio > lower && log_ratio < upper ? 0.0 : 1.0;
    t.mde = 0.0;
    return t;
  }
  const double q = student_t_quantile(inside(1.0 - (1.0 - o.confidence) / 2.0), df);
  t.low = std::exp(log_ratio - q * se_log);
  t.high = std::exp(log_ratio + q * se_log);
  t.p = std::min(1.0, 2.0 * student_t_upper_tail(std::fabs(log_ratio) / se_log, df));
  const double p_above_lower = student_t_upper_tail((log_ratio - lower) / se_log, df);
  const double p_below_upper = student_t_upper_tail((upper - log_ratio) / se_log, df);
  t.tost_p = std::max(p_above_lower, p_below_upper);
  const double z =
      student_t_quantile(inside(1.0 - o.alpha / 2.0), df) + student_t_quantile(inside(o.power), df);
  t.mde = std::expm1(z * se_log);
  return t;
}

double welch_df(double var_mean_a, int64_t n_a, double var_mean_b, int64_t n_b) {
  const double va = var_mean_a;
  const double vb = var_mean_b;
  const double na = static_cast<double>(n_a);
  const double nb = static_cast<double>(n_b);
  return va + vb > 0.0 ? (va + vb) * (va + vb) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0))
                       : na + nb - 2.0;
}

RatioTest run_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                         const RatioTestOptions& options) {
  if (a.empty() || b.empty()) throw std::invalid_argument("run_ratio_test: empty side");
  if (a.size() < 2 && b.size() < 2) {
    throw std::invalid_argument("run_ratio_test: one run per side has no run-to-run variance");
  }
  auto logs = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (double x : v) {
      if (!(x > 0.0)) throw std::invalid_argument("run_ratio_test: values must be positive");
      out.push_back(std::log(x));
    }
    return out;
  };
  const MeanVariance la = mean_variance(logs(a));
  const MeanVariance lb = mean_variance(logs(b));
  const double na = static_cast<double>(la.n);
  const double nb = static_cast<double>(lb.n);
  double se = 0.0;
  double df = 0.0;
  if (la.n >= 2 && lb.n >= 2) {
    const double va = la.variance / na;
    const double vb = lb.variance / nb;
    se = std::sqrt(va + vb);
    df = welch_df(va, la.n, vb, lb.n);
  } else {
    // One side has a single run: it is taken to vary as the other side's runs do.
    const MeanVariance& multi = la.n >= 2 ? la : lb;
    se = std::sqrt(multi.variance * (1.0 / na + 1.0 / nb));
    df = static_cast<double>(multi.n) - 1.0;
  }
  RatioTest t = ratio_test_from_log(lb.mean - la.mean, se, df, options);
  t.n_a = la.n;
  t.n_b = lb.n;
  return t;
}

namespace {

// log(b[i] / a[i]) of each pair; throws as paired_ratio_test() documents, naming `who`.
std::vector<double> pair_logs(const std::vector<double>& a, const std::vector<double>& b,
                              const std::string& who) {
  if (a.size() != b.size()) throw std::invalid_argument(who + ": sides differ in length");
  if (a.size() < 2) throw std::invalid_argument(who + ": fewer than two pairs");
  std::vector<double> logs;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] > 0.0) || !(b[i] > 0.0)) {
      throw std::invalid_argument(who + ": values must be positive");
    }
    logs.push_back(std::log(b[i] / a[i]));
  }
  return logs;
}

}  // namespace

RatioTest trimmed_log_ratio_test(std::vector<double> logs, double trim,
                                 const RatioTestOptions& options) {
  if (!(trim >= 0.0 && trim < 0.5)) {
    throw std::invalid_argument("trimmed_log_ratio_test: trim must be in [0, 0.5)");
  }
  if (logs.size() < 2) throw std::invalid_argument("trimmed_log_ratio_test: fewer than two values");
  std::sort(logs.begin(), logs.end());
  const size_t n = logs.size();
  auto g = static_cast<size_t>(std::floor(trim * static_cast<double>(n)));
  if (n - 2 * g < 2) g = (n - 2) / 2;  // keep two values at least
  const size_t h = n - 2 * g;
  double trimmed = 0.0;
  for (size_t i = g; i < n - g; ++i) trimmed += logs[i];
  trimmed /= static_cast<double>(h);
  // Winsorized: the trimmed values pulled in to the nearest kept one.
  std::vector<double> winsorized(logs);
  for (size_t i = 0; i < g; ++i) {
    winsorized[i] = logs[g];
    winsorized[n - 1 - i] = logs[n - 1 - g];
  }
  const double var_w = mean_variance(winsorized).variance;
  const double se = std::sqrt(static_cast<double>(n - 1) * var_w /
                              (static_cast<double>(h) * static_cast<double>(h - 1)));
  RatioTest t = ratio_test_from_log(trimmed, se, static_cast<double>(h) - 1.0, options);
  t.n_a = static_cast<int64_t>(n);
  t.n_b = static_cast<int64_t>(n);
  return t;
}

RatioTest trimmed_paired_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                                    double trim, const RatioTestOptions& options) {
  if (!(trim >= 0.0 && trim < 0.5)) {
    throw std::invalid_argument("trimmed_paired_ratio_test: trim must be in [0, 0.5)");
  }
  return trimmed_log_ratio_test(pair_logs(a, b, "trimmed_paired_ratio_test"), trim, options);
}

RatioTest paired_ratio_test(const std::vector<double>& a, const std::vector<double>& b,
                            const RatioTestOptions& options) {
  const std::vector<double> logs = pair_logs(a, b, "paired_ratio_test");
  const MeanVariance d = mean_variance(logs);
  const double n = static_cast<double>(d.n);
  RatioTest t = ratio_test_from_log(d.mean, std::sqrt(d.variance / n), n - 1.0, options);
  t.n_a = d.n;
  t.n_b = d.n;
  return t;
}

int runs_needed(double se_log, int runs, const RatioTestOptions& o, int max_runs) {
  if (!(se_log > 0.0)) return std::max(runs, 2);
  // se with n runs per side ~ sigma * sqrt(2 / n): sigma from the measured se.
  const double sigma = se_log * std::sqrt(static_cast<double>(std::max(runs, 1)) / 2.0);
  const double effect = std::log1p(o.threshold);
  for (int n = 2; n <= max_runs; ++n) {
    const double df = 2.0 * n - 2.0;
    const double z = student_t_quantile(inside(1.0 - o.alpha / 2.0), df) +
                     student_t_quantile(inside(o.power), df);
    if (z * sigma * std::sqrt(2.0 / n) <= effect) return n;
  }
  return max_runs;
}

ArmRatio arm_ratio(const std::vector<double>& baseline, const std::vector<double>& arm, double trim,
                   const RatioTestOptions& options, int max_rounds) {
  ArmRatio r;
  r.test = trimmed_paired_ratio_test(baseline, arm, trim, options);
  const RatioTest& t = r.test;
  r.includes_one = t.low <= 1.0 && 1.0 <= t.high;
  const double effect = std::fabs(t.ratio - 1.0);
  r.wider_than_effect = t.high - t.low > effect;
  // On the log scale the interval is log ratio +- q se, with se ~ sigma / sqrt(rounds kept): it is
  // no wider than the effect once 2 q se <= |log ratio|.
  const double log_effect = std::fabs(std::log(t.ratio));
  const auto rounds = static_cast<int>(t.n_a);
  const double kept = t.df + 1.0;
  const double sigma = t.se_log * std::sqrt(kept);
  r.rounds_to_settle = max_rounds;
  if (!(sigma > 0.0)) {
    r.rounds_to_settle = rounds;
  } else if (log_effect > 0.0) {
    const double two_sided = 1.0 - (1.0 - options.confidence) / 2.0;
    auto settled = [&](int n) {
      // The same share of rounds trimmed as now.
      const double n_kept = std::max(2.0, kept * n / std::max(rounds, 1));
      const double q = student_t_quantile(two_sided, n_kept - 1.0);
      return 2.0 * q * sigma / std::sqrt(n_kept) <= log_effect;
    };
    // The width shrinks as the rounds grow: bisect for the first round count that settles.
    if (settled(max_rounds)) {
      int lo = 2;
      int hi = max_rounds;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (settled(mid)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      r.rounds_to_settle = lo;
    }
  }
  return r;
}

}  // namespace recompdiag::stats
