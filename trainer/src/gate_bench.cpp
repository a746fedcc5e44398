#include "recompdiag/trainer/gate_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/trainer/ab_experiment.h"

namespace recompdiag::trainer {

namespace {

std::string level_key(double level) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", level);
  return buf;
}

// What compare said before issue 13: every steady step an independent sample (bootstrap of the
// median ratio, Mann-Whitney U); the runs of a side pooled.
Verdict step_level_verdict(const std::vector<RunFile>& a, const std::vector<RunFile>& b,
                           const CompareOptions& o) {
  auto pooled = [&](const std::vector<RunFile>& side, int phase) {
    std::vector<double> all;
    for (const RunFile& run : side) {
      const RunAnalysis r = analyze_run(run, o.analysis);
      const auto i = find_phase(r, phase);
      if (i) {
        const auto& s = r.phases[*i].steady_sorted_ms;
        all.insert(all.end(), s.begin(), s.end());
      }
    }
    std::sort(all.begin(), all.end());
    return all;
  };
  bool regression = false;
  bool improvement = false;
  for (int phase = 1; phase <= 2; ++phase) {
    const std::vector<double> sa = pooled(a, phase);
    const std::vector<double> sb = pooled(b, phase);
    if (sa.empty() || sb.empty()) continue;
    const stats::RatioInterval r = stats::bootstrap_median_ratio_sorted(sa, sb, o.bootstrap);
    const bool significant = stats::mann_whitney_u_sorted(sa, sb, o.min_samples).p < o.alpha;
    regression |= r.ratio > 1.0 + o.threshold && r.low > 1.0 && significant;
    improvement |= r.ratio < 1.0 - o.threshold && r.high < 1.0 && significant;
  }
  return regression    ? Verdict::kRegression
         : improvement ? Verdict::kImprovement
                       : Verdict::kNoChange;
}

/// Tallies of one method.
struct Tally {
  int false_1 = 0, false_k = 0, inconclusive_1 = 0, inconclusive_k = 0;
  std::vector<int> detected_1, detected_k;
  explicit Tally(size_t levels) : detected_1(levels), detected_k(levels) {}

  GateRates rates(int pairs, int single_pairs) const {
    GateRates r;
    r.false_verdict_1 = static_cast<double>(false_1) / single_pairs;
    r.false_verdict_k = static_cast<double>(false_k) / pairs;
    r.inconclusive_1 = static_cast<double>(inconclusive_1) / single_pairs;
    r.inconclusive_k = static_cast<double>(inconclusive_k) / pairs;
    for (int d : detected_1) r.detection_1.push_back(static_cast<double>(d) / single_pairs);
    for (int d : detected_k) r.detection_k.push_back(static_cast<double>(d) / pairs);
    return r;
  }
};

bool is_false_verdict(Verdict v) { return v == Verdict::kRegression || v == Verdict::kImprovement; }

}  // namespace

void GateBenchOptions::validate() const {
  config.validate();
  if (!config.faults.empty()) throw InputError("bench gate: the healthy config takes no --fault");
  if (pairs < 1) throw InputError("--pairs must be >= 1, got " + std::to_string(pairs));
  if (runs < 2) throw InputError("--runs must be >= 2, got " + std::to_string(runs));
  if (levels.empty()) throw InputError("--levels needs at least one percentage");
  for (double l : levels) {
    if (!(l > 0.0 && l <= 1000.0)) {
      throw InputError("--levels: each percentage must be in (0, 1000], got " + level_key(l));
    }
  }
  if (out_dir.empty()) throw InputError("--out-dir must not be empty");
  compare.validate();
}

nlohmann::json GateBenchResult::to_json(bool step_level_figures) const {
  const GateRates& r = step_level_figures ? step_level : gate;
  const std::string k = std::to_string(runs);
  nlohmann::json detection = nlohmann::json::object();
  for (size_t i = 0; i < levels.size(); ++i) {
    detection[level_key(levels[i])] = {{"1", r.detection_1[i]}, {k, r.detection_k[i]}};
  }
  return {{"false_verdict_rate", {{"1", r.false_verdict_1}, {k, r.false_verdict_k}}},
          {"detection_rate", detection},
          {"pairs", pairs}};
}

GateBenchResult run_gate_bench(const GateBenchOptions& o) {
  o.validate();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("--out-dir " + o.out_dir + ": " + ec.message());
  const auto start = std::chrono::steady_clock::now();

  // Groups: 0 = A (healthy), 1 = B (healthy), 2.. = B with extra-work at each level.
  const size_t groups = 2 + o.levels.size();
  std::vector<TrainConfig> configs(groups, o.config);
  std::vector<std::string> names = {"a", "b"};
  for (size_t l = 0; l < o.levels.size(); ++l) {
    configs[2 + l].faults = parse_faults("extra-work=" + level_key(o.levels[l]));
    names.push_back("extra-work-" + level_key(o.levels[l]));
  }
  CompareOptions compare = o.compare;
  compare.expected_differences = {"config.faults"};

  Tally gate(o.levels.size());
  Tally steps(o.levels.size());
  std::vector<std::vector<double>> slowdowns(o.levels.size());
  double spread_ss = 0.0;  // within-group sum of squares of log phase-1 medians, healthy groups
  int64_t spread_df = 0;
  for (int trial = 1; trial <= o.pairs; ++trial) {
    // Train: the groups take turns run by run, so none always runs first or last.
    std::vector<std::vector<std::string>> paths(groups);
    for (int r = 0; r < o.runs; ++r) {
      for (size_t g = 0; g < groups; ++g) {
        const std::string path =
            (std::filesystem::path(o.out_dir) / (names[g] + "-" + std::to_string(r + 1) + ".jsonl"))
                .string();
        const int code = run_in_child(configs[g], path, names[g], /*quiet=*/true);
        if (code != 0) {
          throw InputError("bench gate: the " + names[g] + " run of trial " +
                           std::to_string(trial) + " failed (exit " + std::to_string(code) + ")");
        }
        paths[g].push_back(path);
      }
    }
    std::vector<std::vector<RunFile>> files(groups);
    for (size_t g = 0; g < groups; ++g) {
      for (const std::string& p : paths[g]) files[g].push_back(read_run_file(p));
    }
    auto one = [&](size_t g, int r) {
      return std::vector<RunFile>{files[g][static_cast<size_t>(r)]};
    };
    // Healthy: A against B.
    const Comparison healthy = compare_run_sets(files[0], files[1], compare);
    if (!healthy.phases.empty()) {
      for (const auto* medians :
           {&healthy.phases.front().run_medians_a_ms, &healthy.phases.front().run_medians_b_ms}) {
        std::vector<double> logs;
        for (double m : *medians) logs.push_back(std::log(m));
        const stats::MeanVariance mv = stats::mean_variance(logs);
        spread_ss += mv.variance * static_cast<double>(mv.n - 1);
        spread_df += mv.n - 1;
      }
    }
    gate.false_k += is_false_verdict(healthy.verdict);
    gate.inconclusive_k += healthy.verdict == Verdict::kInconclusive;
    steps.false_k += is_false_verdict(step_level_verdict(files[0], files[1], compare));
    for (int r = 0; r < o.runs; ++r) {
      const Verdict v = compare_run_sets(one(0, r), one(1, r), compare).verdict;
      gate.false_1 += is_false_verdict(v);
      gate.inconclusive_1 += v == Verdict::kInconclusive;
      steps.false_1 += is_false_verdict(step_level_verdict(one(0, r), one(1, r), compare));
    }
    // Faulty: A against B with extra work.
    for (size_t l = 0; l < o.levels.size(); ++l) {
      const size_t g = 2 + l;
      const Comparison c = compare_run_sets(files[0], files[g], compare);
      gate.detected_k[l] += c.verdict == Verdict::kRegression;
      if (!c.phases.empty()) slowdowns[l].push_back(c.phases.front().ratio.ratio);
      steps.detected_k[l] +=
          step_level_verdict(files[0], files[g], compare) == Verdict::kRegression;
      for (int r = 0; r < o.runs; ++r) {
        gate.detected_1[l] +=
            compare_run_sets(one(0, r), one(g, r), compare).verdict == Verdict::kRegression;
        steps.detected_1[l] +=
            step_level_verdict(one(0, r), one(g, r), compare) == Verdict::kRegression;
      }
    }
    if (!o.quiet) {
      std::fprintf(stderr,
                   "recompdiag: bench gate: trial %d/%d done (%.0f s); healthy %s; so far false "
                   "verdicts %d/%d (1 run) %d/%d (%d runs)\n",
                   trial, o.pairs,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                   to_string(healthy.verdict), gate.false_1, trial * o.runs, gate.false_k, trial,
                   o.runs);
    }
  }

  GateBenchResult result;
  result.pairs = o.pairs;
  result.runs = o.runs;
  result.single_pairs = o.pairs * o.runs;
  result.levels = o.levels;
  result.gate = gate.rates(result.pairs, result.single_pairs);
  result.step_level = steps.rates(result.pairs, result.single_pairs);
  for (auto& s : slowdowns) result.measured_slowdown.push_back(stats::median(s));
  result.run_spread = spread_df > 0 ? std::sqrt(spread_ss / static_cast<double>(spread_df)) : 0.0;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace recompdiag::trainer
