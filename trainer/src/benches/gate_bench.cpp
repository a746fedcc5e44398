#include "recompdiag/trainer/gate_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/runner/bench_json.h"
#include "recompdiag/trainer/ab_experiment.h"
#include "recompdiag/trainer/noise_bench.h"

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

/// Tallies of one mode: false verdicts and inconclusive ones on healthy pairs, detections per
/// level.
struct ModeTally {
  int false_verdicts = 0;
  int inconclusive = 0;
  std::vector<int> detected;
  explicit ModeTally(size_t levels) : detected(levels) {}

  void healthy(Verdict v) {
    false_verdicts += v == Verdict::kRegression || v == Verdict::kImprovement;
    inconclusive += v == Verdict::kInconclusive;
  }
  void faulty(size_t level, Verdict v) { detected[level] += v == Verdict::kRegression; }
  double false_rate(int n) const { return n ? static_cast<double>(false_verdicts) / n : 0.0; }
  double inconclusive_rate(int n) const { return n ? static_cast<double>(inconclusive) / n : 0.0; }
  std::vector<double> detection(int n) const {
    std::vector<double> out;
    for (int d : detected) out.push_back(n ? static_cast<double>(d) / n : 0.0);
    return out;
  }
};

/// Tallies of one method in every mode.
struct Tally {
  ModeTally one, k, profile, turns;
  explicit Tally(size_t levels) : one(levels), k(levels), profile(levels), turns(levels) {}

  GateRates rates(int pairs, int single_pairs) const {
    GateRates r;
    r.false_verdict_1 = one.false_rate(single_pairs);
    r.false_verdict_k = k.false_rate(pairs);
    r.inconclusive_1 = one.inconclusive_rate(single_pairs);
    r.inconclusive_k = k.inconclusive_rate(pairs);
    r.detection_1 = one.detection(single_pairs);
    r.detection_k = k.detection(pairs);
    r.false_verdict_profile = profile.false_rate(single_pairs);
    r.inconclusive_profile = profile.inconclusive_rate(single_pairs);
    r.detection_profile = profile.detection(single_pairs);
    r.false_verdict_turns = turns.false_rate(pairs);
    r.inconclusive_turns = turns.inconclusive_rate(pairs);
    r.detection_turns = turns.detection(pairs);
    return r;
  }
};

/// One pair of runs taking turns step by step in `dir` (as `ab` runs them), compared turn by turn.
Comparison turn_pair(const TrainConfig& a, const TrainConfig& b, const std::string& b_name,
                     const std::string& dir, const CompareOptions& compare, int trial) {
  AbExperimentOptions ab;
  ab.a = {"a", a};
  ab.b = {b_name, b};
  ab.out_dir = dir;
  ab.quiet = true;
  ab.schedule = AbSchedule::kInterleaved;
  const AbExperimentResult r = run_ab_experiment(ab);
  if (r.exit_code != 0) {
    throw InputError("bench gate: the turn-taking pair " + b_name + " of trial " +
                     std::to_string(trial) + " failed (exit " + std::to_string(r.exit_code) + ")");
  }
  return compare_run_sets({read_run_file(r.a_paths[0])}, {read_run_file(r.b_paths[0])},
                          ab.compare_options(compare));
}

// One trial's runs: o.runs of each group, the groups taking turns run by run so that none always
// runs first or last, read back. Throws InputError for a run that failed.
std::vector<std::vector<RunFile>> train_trial(const std::vector<TrainConfig>& configs,
                                              const std::vector<std::string>& names,
                                              const GateBenchOptions& o, int trial) {
  std::vector<std::vector<std::string>> paths(configs.size());
  for (int r = 0; r < o.runs; ++r) {
    for (size_t g = 0; g < configs.size(); ++g) {
      const std::string path =
          (std::filesystem::path(o.out_dir) / (names[g] + "-" + std::to_string(r + 1) + ".jsonl"))
              .string();
      const int code = run_in_child(configs[g], path, names[g], /*quiet=*/true);
      if (code != 0) {
        throw InputError("bench gate: the " + names[g] + " run of trial " + std::to_string(trial) +
                         " failed (exit " + std::to_string(code) + ")");
      }
      paths[g].push_back(path);
    }
  }
  std::vector<std::vector<RunFile>> files(configs.size());
  for (size_t g = 0; g < configs.size(); ++g) {
    for (const std::string& p : paths[g]) files[g].push_back(read_run_file(p));
  }
  return files;
}

// Adds the healthy sides' within-side sum of squares of log phase-1 medians, and its degrees of
// freedom: the machine's run-to-run spread.
void add_run_spread(const Comparison& healthy, double& ss, int64_t& df) {
  if (healthy.phases.empty()) return;
  for (const auto* medians :
       {&healthy.phases.front().run_medians_a_ms, &healthy.phases.front().run_medians_b_ms}) {
    std::vector<double> logs;
    for (double m : *medians) logs.push_back(std::log(m));
    const stats::MeanVariance mv = stats::mean_variance(logs);
    ss += mv.variance * static_cast<double>(mv.n - 1);
    df += mv.n - 1;
  }
}

}  // namespace

void GateBenchOptions::validate() const {
  config.validate();
  if (!config.faults.empty()) throw InputError("bench gate: the healthy config takes no --fault");
  require_at_least("--pairs", pairs, 1);
  require_at_least("--runs", runs, 2);
  if (levels.empty()) throw InputError("--levels needs at least one percentage");
  if (noise_runs != 0 && noise_runs < 3) {
    throw InputError("--noise-runs must be 0 or >= 3, got " + std::to_string(noise_runs));
  }
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
  const bool profile = !step_level_figures && noise.runs > 0;
  const bool turns = !step_level_figures && !r.detection_turns.empty() && turn_pairs > 0;
  nlohmann::json detection = nlohmann::json::object();
  for (size_t i = 0; i < levels.size(); ++i) {
    nlohmann::json& d = detection[level_key(levels[i])];
    d = {{"1", r.detection_1[i]}, {k, r.detection_k[i]}};
    if (profile) d["1+profile"] = r.detection_profile[i];
    if (turns) d["turns"] = r.detection_turns[i];
  }
  nlohmann::json false_rate = {{"1", r.false_verdict_1}, {k, r.false_verdict_k}};
  nlohmann::json inconclusive = {{"1", r.inconclusive_1}, {k, r.inconclusive_k}};
  if (profile) {
    false_rate["1+profile"] = r.false_verdict_profile;
    inconclusive["1+profile"] = r.inconclusive_profile;
  }
  if (turns) {
    false_rate["turns"] = r.false_verdict_turns;
    inconclusive["turns"] = r.inconclusive_turns;
  }
  nlohmann::json out = runner::bench_json_head("gate");
  out.update({{"false_verdict_rate", false_rate},
              {"inconclusive_rate", inconclusive},
              {"detection_rate", detection},
              {"pairs", pairs}});
  if (!step_level_figures) {
    out["run_spread"] = run_spread;
    if (profile) out["noise_profile"] = noise.to_json();
  }
  return out;
}

GateBenchResult run_gate_bench(const GateBenchOptions& o) {
  o.validate();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("--out-dir " + o.out_dir + ": " + ec.message());
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

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
  compare.run_noise.reset();  // one independent run per side: nothing assumed

  GateBenchResult result;
  // This machine's noise, measured before the trials (what a CI would keep as a profile).
  CompareOptions with_profile = compare;
  if (o.noise_runs > 0) {
    NoiseBenchOptions noise;
    noise.config = o.config;
    noise.runs = o.noise_runs;
    noise.out_dir = (std::filesystem::path(o.out_dir) / "noise").string();
    noise.quiet = o.quiet;
    result.noise = run_noise_bench(noise);
    apply_noise_profile(result.noise, "measured before the trials", with_profile);
  }

  Tally gate(o.levels.size());
  Tally steps(o.levels.size());
  std::vector<std::vector<double>> slowdowns(o.levels.size());
  std::vector<std::vector<double>> slowdowns_turns(o.levels.size());
  double spread_ss = 0.0;  // within-group sum of squares of log phase-1 medians, healthy groups
  int64_t spread_df = 0;
  for (int trial = 1; trial <= o.pairs; ++trial) {
    const std::vector<std::vector<RunFile>> files = train_trial(configs, names, o, trial);
    auto one = [&](size_t g, int r) {
      return std::vector<RunFile>{files[g][static_cast<size_t>(r)]};
    };
    // Healthy: A against B.
    const Comparison healthy = compare_run_sets(files[0], files[1], compare);
    add_run_spread(healthy, spread_ss, spread_df);
    gate.k.healthy(healthy.verdict);
    steps.k.healthy(step_level_verdict(files[0], files[1], compare));
    for (int r = 0; r < o.runs; ++r) {
      gate.one.healthy(compare_run_sets(one(0, r), one(1, r), compare).verdict);
      if (o.noise_runs > 0) {
        gate.profile.healthy(compare_run_sets(one(0, r), one(1, r), with_profile).verdict);
      }
      steps.one.healthy(step_level_verdict(one(0, r), one(1, r), compare));
    }
    // Faulty: A against B with extra work.
    for (size_t l = 0; l < o.levels.size(); ++l) {
      const size_t g = 2 + l;
      const Comparison c = compare_run_sets(files[0], files[g], compare);
      gate.k.faulty(l, c.verdict);
      if (!c.phases.empty()) slowdowns[l].push_back(c.phases.front().ratio.ratio);
      steps.k.faulty(l, step_level_verdict(files[0], files[g], compare));
      for (int r = 0; r < o.runs; ++r) {
        gate.one.faulty(l, compare_run_sets(one(0, r), one(g, r), compare).verdict);
        if (o.noise_runs > 0) {
          gate.profile.faulty(l, compare_run_sets(one(0, r), one(g, r), with_profile).verdict);
        }
        steps.one.faulty(l, step_level_verdict(one(0, r), one(g, r), compare));
      }
    }
    // One pair taking turns per group: the machine's state both runs see cancels step by step.
    std::string turns_verdict = "-";
    if (o.turns) {
      const std::string dir = (std::filesystem::path(o.out_dir) / "turns").string();
      const Comparison h = turn_pair(o.config, o.config, "b", dir, compare, trial);
      gate.turns.healthy(h.verdict);
      turns_verdict = to_string(h.verdict);
      for (size_t l = 0; l < o.levels.size(); ++l) {
        const Comparison c = turn_pair(o.config, configs[2 + l], names[2 + l], dir, compare, trial);
        gate.turns.faulty(l, c.verdict);
        if (!c.phases.empty()) slowdowns_turns[l].push_back(c.phases.front().ratio.ratio);
      }
    }
    if (!o.quiet) {
      std::fprintf(stderr,
                   "recompdiag: bench gate: trial %d/%d done (%.0f s); healthy %s (%d runs), %s "
                   "(turns); so far false verdicts %d/%d (1 run + profile) %d/%d (%d runs) %d/%d "
                   "(turns)\n",
                   trial, o.pairs, elapsed(), to_string(healthy.verdict), o.runs,
                   turns_verdict.c_str(), gate.profile.false_verdicts, trial * o.runs,
                   gate.k.false_verdicts, trial, o.runs, gate.turns.false_verdicts,
                   o.turns ? trial : 0);
    }
  }

  result.pairs = o.pairs;
  result.runs = o.runs;
  result.single_pairs = o.pairs * o.runs;
  result.turn_pairs = o.turns ? o.pairs : 0;
  result.levels = o.levels;
  result.gate = gate.rates(result.pairs, result.single_pairs);
  result.step_level = steps.rates(result.pairs, result.single_pairs);
  for (auto& s : slowdowns) result.measured_slowdown.push_back(stats::median(s));
  for (auto& s : slowdowns_turns) {
    result.measured_slowdown_turns.push_back(s.empty() ? 0.0 : stats::median(s));
  }
  result.run_spread = spread_df > 0 ? std::sqrt(spread_ss / static_cast<double>(spread_df)) : 0.0;
  result.seconds = elapsed();
  return result;
}

}  // namespace recompdiag::trainer
