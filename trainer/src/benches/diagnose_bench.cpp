#include "recompdiag/trainer/diagnose_bench.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/words.h"
#include "recompdiag/runner/bench_json.h"
#include "recompdiag/trainer/ab_experiment.h"
#include "recompdiag/trainer/faults.h"

namespace recompdiag::trainer {

namespace {

/// What the time verdict of a fault must be: a regression, anything but one, or either (a cost
/// that this device does not show: a host sync or the profiling plan costs next to nothing on
/// the CPU).
enum class TimeCost { kRegression, kNone, kAny };

/// What a correct diagnosis of each fault names: its alert rule, the first signal of the phase
/// verdict, whether its cost is training quality (a convergence regression), and its time verdict.
struct Expectation {
  FaultKind kind;
  const char* rule;
  const char* cause;
  bool quality_cost;
  TimeCost time;
};

constexpr Expectation kExpectations[] = {
    {FaultKind::kRecompileStorm, "compile_after_warmup", "jit_compiles", false,
     TimeCost::kRegression},
    {FaultKind::kFreshOptimizer, "optimizer_state_reset", "optimizer_reset", true, TimeCost::kNone},
    {FaultKind::kLrTrap, "lr_not_in_effect", "lr_not_in_effect", true, TimeCost::kNone},
    {FaultKind::kStateDtype, "optimizer_state_off_device", "optimizer_state_dtype", false,
     TimeCost::kAny},
    {FaultKind::kHostSync, "host_syncs", "syncs", false, TimeCost::kAny},
    {FaultKind::kDeopt, "jit_not_optimized", "jit_profiling_runs", false, TimeCost::kAny},
    {FaultKind::kLeak, "memory_growth", "memory_growth", false, TimeCost::kRegression},
};

const Expectation* expectation_of(FaultKind kind) {
  for (const Expectation& e : kExpectations) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

std::vector<std::string> default_faults() {
  std::vector<std::string> out;
  for (const FaultInfo& f : fault_catalogue()) {
    if (!f.needs_cuda && !f.takes_value && expectation_of(f.kind)) out.push_back(f.name);
  }
  return out;
}

/// Rule -> steps at which it fired in `b` but not at the same step in `a`.
std::map<std::string, std::vector<int64_t>> new_alerts(const RunAnalysis& a, const RunAnalysis& b) {
  std::set<std::pair<std::string, int64_t>> in_a;
  for (const AlertInstance& x : a.alerts) in_a.insert({x.rule, x.step});
  std::map<std::string, std::vector<int64_t>> out;
  for (const AlertInstance& x : b.alerts) {
    if (!in_a.count({x.rule, x.step})) out[x.rule].push_back(x.step);
  }
  return out;
}

/// The strongest signal by which any phase of `b` differs from the same phase of `a`.
Signal phase_verdict_cause(const RunAnalysis& a, const RunAnalysis& b) {
  Signal best;
  for (const PhaseAnalysis& pb : b.phases) {
    const auto pa = find_phase(a, pb.phase);
    const std::vector<Signal> signals =
        rank_phase_signals(pb, pa ? &a.phases[*pa] : nullptr, b.header.optimizer);
    if (!signals.empty() && signals.front().score > best.score) best = signals.front();
  }
  return best;
}

std::string costliest_stretch_cause(const RunAnalysis& b) {
  const SlowStretch* worst = nullptr;
  for (const SlowStretch& s : b.slow_stretches) {
    if (!worst || s.extra_s > worst->extra_s) worst = &s;
  }
  if (!worst) return "";
  return worst->signals.empty() ? "no probe signal coincides"
                                : reports::signal_words(worst->signals.front());
}

double total_ms(const RunFile& run) {
  double sum = 0.0;
  for (const StepRecord& s : run.steps) sum += s.wall_ms;
  return sum;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 1.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The experiment of one interleaved pair: A healthy, B `faults`, both with `seed`.
AbExperimentOptions pair_options(const DiagnoseBenchOptions& o, const std::string& name,
                                 const FaultSet& faults, uint64_t seed) {
  AbExperimentOptions ab;
  // Named after the fault too: every pair's files stay in the out dir.
  ab.a.name = (faults.kinds.empty() ? std::string("healthy") : "healthy-for-" + name) + "-seed" +
              std::to_string(seed);
  ab.a.config = o.config;
  ab.a.config.seed = seed;
  ab.a.config.faults = {};
  ab.b.name = name + "-seed" + std::to_string(seed);
  ab.b.config = ab.a.config;
  ab.b.config.faults = faults;
  ab.out_dir = o.out_dir;
  ab.quiet = o.quiet;
  return ab;
}

}  // namespace

void DiagnoseBenchOptions::validate() const {
  config.validate();
  require_at_least("--seeds", seeds, 1);
  require_at_least("--quality-seeds", quality_seeds, 1);
  for (const std::string& name : faults) {
    const FaultSet set = parse_faults(name, "--faults");
    if (set.kinds.size() != 1 || !expectation_of(set.kinds.front()) ||
        fault_info(set.kinds.front()).needs_cuda) {
      throw InputError("--faults: '" + name + "' is not a CPU fault the bench can score");
    }
  }
  compare.validate();
}

DiagnoseBenchResult run_diagnose_bench(const DiagnoseBenchOptions& o) {
  o.validate();
  DiagnoseBenchResult out;
  const std::vector<std::string> names = o.faults.empty() ? default_faults() : o.faults;
  std::map<std::string, int64_t> healthy_alerts;
  for (const std::string& name : names) {
    const FaultSet faults = parse_faults(name);
    const Expectation& want = *expectation_of(faults.kinds.front());
    FaultScore score;
    score.name = name;
    score.expected = want.rule;
    score.expected_cause = want.cause;
    score.alert_in_every_pair = true;
    score.cause_in_every_pair = true;
    std::vector<RunFile> a_runs;
    std::vector<RunFile> b_runs;
    std::vector<double> ratios;
    CompareOptions compare;
    score.pairs = want.quality_cost ? std::max(o.seeds, o.quality_seeds) : o.seeds;
    for (int i = 0; i < score.pairs; ++i) {
      const uint64_t seed = o.config.seed + static_cast<uint64_t>(i);
      const AbExperimentOptions ab = pair_options(o, name, faults, seed);
      const AbExperimentResult pair = run_ab_experiment(ab);
      // As `ab` compares its pairs: no assumed run-to-run spread for runs that took turns.
      if (i == 0) compare = ab.compare_options(o.compare);
      if (pair.exit_code != 0) {
        out.exit_code = pair.exit_code;
        return out;
      }
      a_runs.push_back(read_run_file(pair.a_paths.front()));
      b_runs.push_back(read_run_file(pair.b_paths.front()));
      const RunAnalysis a = analyze_run(a_runs.back());
      const RunAnalysis b = analyze_run(b_runs.back());
      const auto fired = new_alerts(a, b);
      const Signal cause = phase_verdict_cause(a, b);
      if (!fired.count(want.rule)) score.alert_in_every_pair = false;
      if (cause.kind != want.cause) score.cause_in_every_pair = false;
      // The pair alone, as `recompdiag ab --fault` would judge it.
      if (compare_runs(a_runs.back(), b_runs.back(), ab.compare_options(o.compare)).verdict ==
          Verdict::kRegression) {
        ++score.pair_time_regressions;
        score.pair_time_regressions_named += cause.kind == want.cause;
      }
      if (i == 0) {
        score.alerts = fired;
        score.top_cause = cause.kind.empty() ? "" : reports::signal_words(cause);
        score.top_cause_kind = cause.kind;
        score.stretch_cause = costliest_stretch_cause(b);
      }
      ratios.push_back(total_ms(b_runs.back()) / std::max(total_ms(a_runs.back()), 1e-9));
      // The healthy side of every pair is a healthy run too: its alerts count towards the rate.
      for (const AlertInstance& x : a.alerts) ++healthy_alerts[x.rule];
      out.healthy_steps += a.steps;
    }
    score.time_ratio = median_of(ratios);
    // The run sets hold several seeds per side.
    compare.expected_differences.insert(compare.expected_differences.end(),
                                        {"config.seed", "seed"});
    const Comparison time = compare_run_sets(a_runs, b_runs, compare);
    score.time_verdict = time.verdict;
    score.time_summary = reports::time_summary(time);
    score.convergence = compare_convergence(a_runs, b_runs, o.convergence);
    std::vector<std::string> why;
    if (!score.alert_in_every_pair) why.push_back(want.rule + std::string(" did not fire"));
    if (!score.cause_in_every_pair) why.push_back("top cause is not " + std::string(want.cause));
    // A fault is scored on its own signal. Whether a fresh optimizer or a trapped lr costs
    // training quality depends on the task (on an LSTM config a fresh Adam after the switch
    // trained better in every pair): the quality verdict is reported, not required.
    if (want.time == TimeCost::kNone && score.time_verdict == Verdict::kRegression) {
      why.push_back("a time regression");
    }
    if (want.time == TimeCost::kRegression && score.time_verdict != Verdict::kRegression) {
      why.push_back("no time regression");
    }
    for (const std::string& w : why) score.why += (score.why.empty() ? "" : "; ") + w;
    score.correct = why.empty();
    out.faults.push_back(std::move(score));
  }

  // Healthy against healthy: same seed and config on both sides.
  for (int i = 0; i < o.seeds; ++i) {
    const uint64_t seed = o.config.seed + static_cast<uint64_t>(i);
    const AbExperimentOptions ab = pair_options(o, "healthy-twin", FaultSet{}, seed);
    const AbExperimentResult pair = run_ab_experiment(ab);
    if (pair.exit_code != 0) {
      out.exit_code = pair.exit_code;
      return out;
    }
    const RunFile a = read_run_file(pair.a_paths.front());
    const RunFile b = read_run_file(pair.b_paths.front());
    ++out.healthy_pairs;
    const bool time_regression =
        compare_runs(a, b, ab.compare_options(o.compare)).verdict == Verdict::kRegression;
    const bool quality_regression =
        compare_convergence({a}, {b}, o.convergence).verdict == ConvergenceVerdict::kRegression;
    if (time_regression || quality_regression) ++out.regression_verdicts;
    for (const RunFile* run : {&a, &b}) {
      const RunAnalysis analysis = analyze_run(*run);
      for (const AlertInstance& x : analysis.alerts) ++healthy_alerts[x.rule];
      out.healthy_steps += analysis.steps;
    }
  }
  for (const auto& [rule, n] : healthy_alerts) {
    out.alerts_per_1000_steps[rule] =
        out.healthy_steps > 0 ? 1000.0 * static_cast<double>(n) / out.healthy_steps : 0.0;
  }
  return out;
}

namespace {

nlohmann::ordered_json measures_json(const ConvergenceComparison& c) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const QualityMeasure& m : c.measures) {
    out.push_back({{"name", m.name},
                   {"a", m.a},
                   {"b", m.b},
                   {"change", m.change},
                   {"worse_pairs", m.worse_pairs},
                   {"better_pairs", m.better_pairs},
                   {"p", m.p},
                   {"regression", m.regression}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json diagnose_bench_json(const DiagnoseBenchResult& r) {
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const FaultScore& f : r.faults) {
    nlohmann::ordered_json alerts = nlohmann::ordered_json::object();
    for (const auto& [rule, steps] : f.alerts) alerts[rule] = steps;
    const ConvergenceComparison& c = f.convergence;
    faults.push_back({{"name", f.name},
                      {"correct", f.correct},
                      {"expected", f.expected},
                      {"expected_cause", f.expected_cause},
                      {"top_cause", f.top_cause},
                      {"top_cause_kind", f.top_cause_kind},
                      {"stretch_cause", f.stretch_cause},
                      {"alerts", alerts},
                      {"pairs", f.pairs},
                      {"time_ratio", f.time_ratio},
                      {"time_verdict", to_string(f.time_verdict)},
                      {"pair_time_regressions", f.pair_time_regressions},
                      {"pair_time_regressions_named", f.pair_time_regressions_named},
                      {"time_summary", f.time_summary},
                      {"convergence",
                       {{"verdict", to_string(c.verdict)},
                        {"pairs", c.pairs},
                        {"worse_pairs", c.worse_pairs},
                        {"final_loss_a", c.final_loss_a},
                        {"final_loss_b", c.final_loss_b},
                        {"final_loss_change", c.final_loss_change},
                        {"recovery_steps_a", c.recovery_steps_a},
                        {"recovery_steps_b", c.recovery_steps_b},
                        {"tested", c.tested},
                        {"measures", measures_json(c)},
                        {"summary", reports::convergence_summary(c)}}},
                      {"why", f.why}});
  }
  nlohmann::ordered_json rates = nlohmann::ordered_json::object();
  for (const auto& [rule, rate] : r.alerts_per_1000_steps) rates[rule] = rate;
  nlohmann::ordered_json out = runner::bench_json_head("diagnose");
  out["faults"] = faults;
  out["healthy"] = {{"pairs", r.healthy_pairs},
                    {"regression_verdicts", r.regression_verdicts},
                    {"steps", r.healthy_steps},
                    {"alerts_per_1000_steps", rates}};
  return out;
}

}  // namespace recompdiag::trainer
