// `recompdiag bench diagnose`: every CPU fault against its healthy twin and healthy against
// healthy over several seeds; prints a table of what the diagnosis said and writes it as JSON.

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/command_line.h"
#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/words.h"
#include "recompdiag/trainer/diagnose_bench.h"

namespace recompdiag::trainer::cli {

namespace {

struct BenchDiagnose {
  TrainFlags flags;
  DiagnoseBenchOptions options;
  std::string faults;
  std::string json;
};

std::string alerts_text(const FaultScore& f) {
  std::string out;
  for (const auto& [rule, steps] : f.alerts) {
    out += (out.empty() ? "" : ", ") + rule + " @";
    for (size_t i = 0; i < steps.size() && i < 4; ++i) {
      out += (i ? "," : "") + std::to_string(steps[i]);
    }
    if (steps.size() > 4) out += ",...(" + std::to_string(steps.size()) + ")";
  }
  return out.empty() ? "none" : out;
}

void print_table(const DiagnoseBenchResult& r, int seeds, int quality_seeds) {
  int correct = 0;
  for (const FaultScore& f : r.faults) correct += f.correct ? 1 : 0;
  std::printf(
      "bench diagnose: %zu faults x %d seeds (quality faults: %d), each against its healthy twin "
      "(interleaved)\n",
      r.faults.size(), seeds, quality_seeds);
  std::printf("%-16s %-7s %-22s %-9s %-13s %-8s %s\n", "fault", "correct", "expected alert",
              "time B/A", "time verdict", "quality",
              "top cause (phase verdict) | alerts in B, first seed");
  for (const FaultScore& f : r.faults) {
    std::printf("%-16s %-7s %-22s %-9.3f %-13s %-8s %s | %s\n", f.name.c_str(),
                f.correct ? "yes" : "NO", f.expected.c_str(), f.time_ratio,
                to_string(f.time_verdict),
                f.convergence.verdict == ConvergenceVerdict::kRegression           ? "regress"
                : f.convergence.verdict == ConvergenceVerdict::kUntestedDifference ? "worse?"
                                                                                   : "same",
                f.top_cause.empty() ? "(none)" : f.top_cause.c_str(), alerts_text(f).c_str());
    if (!f.correct) std::printf("%-16s why: %s\n", "", f.why.c_str());
    std::printf("%-16s time: %s\n", "", f.time_summary.c_str());
    std::printf("%-16s each pair alone: %d of %d a time regression, %d of them naming %s first\n",
                "", f.pair_time_regressions, f.pairs, f.pair_time_regressions_named,
                f.expected_cause.c_str());
    std::printf("%-16s %s\n", "", reports::convergence_summary(f.convergence).c_str());
  }
  std::printf("correct: %d of %zu\n", correct, r.faults.size());
  std::printf("healthy pairs: %d, regression verdicts: %d, %lld healthy steps; alerts per 1,000:",
              r.healthy_pairs, r.regression_verdicts, static_cast<long long>(r.healthy_steps));
  if (r.alerts_per_1000_steps.empty()) std::printf(" none");
  for (const auto& [rule, rate] : r.alerts_per_1000_steps) {
    std::printf(" %s %.2f", rule.c_str(), rate);
  }
  std::printf("\n");
}

}  // namespace

void add_bench_diagnose_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchDiagnose>();
  state->flags.handoff = "migrate";  // the healthy twin migrates Adam's state: the remedy
  state->flags.config = state->options.config;
  CLI::App* cmd = bench.add_subcommand(
      "diagnose",
      "Score the diagnosis: every CPU fault against its healthy twin (same seed and config) and "
      "healthy against healthy, over several seeds, interleaved as ab does; print a table and "
      "optionally write JSON");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--quality-seeds", state->options.quality_seeds,
                  "Seeded pairs for the faults whose cost is training quality (fresh-optimizer, "
                  "lr-trap), when more than --seeds")
      ->capture_default_str();
  cmd->add_option("--seeds", state->options.seeds, "Seeded pairs per fault and healthy pairs")
      ->capture_default_str();
  cmd->add_option("--faults", state->faults,
                  "Faults to score, comma-separated (default: every CPU fault)");
  cmd->add_option("--out-dir", state->options.out_dir, "Directory for the run files")
      ->capture_default_str();
  add_bench_json_flag(*cmd, state->json);
  cmd->callback([state, &ctx] {
    BenchDiagnose& s = *state;
    if (!s.flags.faults.empty()) throw InputError("bench diagnose takes --faults, not --fault");
    DiagnoseBenchOptions o = s.options;
    o.config = to_single_process_config(s.flags, "bench diagnose");
    o.config.log_alerts = false;
    o.quiet = true;
    o.faults.clear();
    if (!s.faults.empty()) {
      for (const FaultKind kind : parse_faults(s.faults, "--faults").kinds) {
        o.faults.push_back(fault_info(kind).name);
      }
    }
    o.validate();
    const DiagnoseBenchResult r = run_diagnose_bench(o);
    if (r.exit_code != 0) {
      ctx.exit_code = r.exit_code;
      return;
    }
    if (s.json != "-") print_table(r, o.seeds, std::max(o.seeds, o.quality_seeds));
    if (!s.json.empty()) write_bench_json(s.json, diagnose_bench_json(r));
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
