#pragma once
/// \file
/// The diagnosis benchmark: every CPU fault against its healthy twin (same seed and config), and
/// healthy against healthy, over several seeds, each pair interleaved step by step as `ab` does.
/// It scores what the diagnosis says: which alerts fired and where, the cause ranked first for the
/// costliest slow stretch and for the phase verdict, the time ratio B/A, the training-quality
/// verdict, and whether the diagnosis is what the fault's catalogue entry expects: its alert in
/// every pair, its signal ranked first, and the time verdict its cost calls for. The quality
/// verdict is reported, not scored (whether a fault costs quality depends on the task).
///
///     DiagnoseBenchOptions options;
///     options.seeds = 3;
///     DiagnoseBenchResult result = run_diagnose_bench(options);
///     std::cout << diagnose_bench_json(result).dump(2);

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/convergence.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

/// Settings of run_diagnose_bench(). Plain data.
struct DiagnoseBenchOptions {
  /// The healthy config: recompile mode with the optimizer state migrated (the remedy), so the
  /// only findings of a faulty twin are its fault's. Seeds are `config.seed`, +1, ...
  TrainConfig config = [] {
    TrainConfig c;
    c.handoff = OptimizerHandoff::kMigrate;
    c.log_alerts = false;
    return c;
  }();
  /// Seeded pairs per fault, and healthy pairs.
  int seeds = 3;
  /// Seeded pairs for a fault whose cost is training quality, when more than `seeds`: a loss
  /// curve varies from seed to seed far more than a step time, and a paired test over three
  /// seeds, adjusted over the quality measures, cannot reach significance.
  int quality_seeds = 6;
  /// Faults to score; empty: every fault of the catalogue that runs on the CPU and takes no value.
  std::vector<std::string> faults;
  std::string out_dir = "recompdiag-bench-diagnose";
  bool quiet = true;
  CompareOptions compare;
  ConvergenceOptions convergence;

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// What the diagnosis said about one fault, over its pairs.
struct FaultScore {
  std::string name;
  bool correct = false;
  std::string expected;        ///< The alert rule the catalogue expects.
  std::string expected_cause;  ///< The signal kind expected first in the phase verdict.
  std::string top_cause;       ///< The phase verdict's first signal (text), first pair.
  std::string top_cause_kind;
  std::string stretch_cause;  ///< The costliest slow stretch's first signal, first pair.
  /// Rule -> steps at which it fired in B and not at the same step in A, first pair.
  std::map<std::string, std::vector<int64_t>> alerts;
  bool alert_in_every_pair = false;
  bool cause_in_every_pair = false;
  int pairs = 0;            ///< Seeded pairs run.
  double time_ratio = 1.0;  ///< Median over pairs of B's total step time over A's.
  Verdict time_verdict = Verdict::kNoChange;  ///< compare's verdict, all pairs as run sets.
  /// Each pair compared alone, as one `ab` run does: time regressions, and those whose phase
  /// verdict names the expected cause first.
  int pair_time_regressions = 0;
  int pair_time_regressions_named = 0;
  std::string time_summary;  ///< Its verdict line.
  ConvergenceComparison convergence;
  std::string why;  ///< What made it incorrect; empty when correct.
};

/// The whole bench.
struct DiagnoseBenchResult {
  std::vector<FaultScore> faults;
  int healthy_pairs = 0;
  int regression_verdicts = 0;  ///< Healthy pairs with a time or training-quality regression.
  int64_t healthy_steps = 0;    ///< Steps of every healthy run, both sides.
  std::map<std::string, double> alerts_per_1000_steps;  ///< By rule, healthy runs.
  int exit_code = 0;  ///< Of the first failed run (see AbExperimentResult).
};

/// Runs the bench. Validates first; forks the runs (see ab_experiment.h). Not thread-safe.
DiagnoseBenchResult run_diagnose_bench(const DiagnoseBenchOptions& options);

/// The result as JSON: bench_json_head("diagnose"), then {"faults":[{"name","correct",
/// "expected","top_cause","alerts","time_ratio","convergence",...}],"healthy":{"pairs",
/// "regression_verdicts","alerts_per_1000_steps"}}.
nlohmann::ordered_json diagnose_bench_json(const DiagnoseBenchResult& result);

}  // namespace recompdiag::trainer
