// `recompdiag ab` as one call: the pairs run, compared, reported and gated.

#include "recompdiag/runner/ab_run.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/until_decided.h"

namespace recompdiag::runner {

void AbRunOptions::validate() const {
  pair.compare_options(gate.compare).validate();
  pair.validate();
  if (until_decided) check_max_pairs(max_pairs);
}

namespace {

// DIR/pairs.json: which side took each pair's first turn, and whether both had started.
void write_pairs(const std::vector<PairTurns>& pairs, const std::string& out_dir) {
  nlohmann::ordered_json j = {
      {"type", "ab_pairs"}, {"schema", 1}, {"pairs", nlohmann::json::array()}};
  for (size_t i = 0; i < pairs.size(); ++i) {
    j["pairs"].push_back({{"pair", i + 1},
                          {"first", std::string(1, pairs[i].first)},
                          {"start_wait_s", pairs[i].start_wait_s},
                          {"started_together", pairs[i].started_together}});
  }
  reports::write_file_atomically(out_dir + "/pairs.json", j.dump(2) + "\n");
}

// "pair 1: B took the first turn, both started first (2.31 s)".
std::string pairs_line(const std::vector<PairTurns>& pairs) {
  std::string line;
  for (size_t i = 0; i < pairs.size(); ++i) {
    char wait[32];
    std::snprintf(wait, sizeof wait, "%.2f s", pairs[i].start_wait_s);
    line += std::string(i == 0 ? "" : "; ") + "pair " + std::to_string(i + 1) + ": " +
            static_cast<char>(pairs[i].first - 'a' + 'A') + " took the first turn, " +
            (pairs[i].started_together
                 ? "both sides started first (" + std::string(wait) + ")"
                 : "not waited for both sides' start (" + std::string(wait) + ")");
  }
  return line;
}

// report_ab() of a comparison already made of `runs` with `gate.compare`, by a gate that ran
// pairs until decided or not.
int report_compared(const AbExperimentResult& runs, const Comparison& c, const Gate& gate,
                    const std::string& out_dir, bool quiet, std::ostream& out, std::ostream& err,
                    const std::optional<Calibration>& calibration,
                    const std::string& calibration_path, bool until_decided_gate) {
  out << reports::write_reports(c, out_dir);
  if (!runs.pairs.empty()) write_pairs(runs.pairs, out_dir);
  if (calibration) {
    out.flush();
    check_calibration_fits(*calibration, c, calibration_path);
    out << "\n" << calibration_line(*calibration) << "\n";
    // The file's advice is for the file's gate; for another, run_ab() has warned already.
    const std::string advice = calibration->until_decided == until_decided_gate
                                   ? calibration_advice(*calibration)
                                   : std::string();
    if (!advice.empty()) {
      out << advice << "\n";
    }
  }
  if (!quiet && !runs.pairs.empty()) out << "\n" << pairs_line(runs.pairs) << "\n";
  if (!quiet) out << "\nreports: " << out_dir << "/report.{md,html,json}\n";
  out.flush();
  return gate.exit_code(c, err);
}

}  // namespace

int report_ab(const AbExperimentResult& runs, const Gate& gate, const std::string& out_dir,
              bool quiet, std::ostream& out, std::ostream& err,
              const std::optional<Calibration>& calibration, const std::string& calibration_path) {
  if (runs.exit_code != 0) return side_failed_exit_code(runs.exit_code);
  return report_compared(runs, compare_run_paths(runs.a_paths, runs.b_paths, gate.compare), gate,
                         out_dir, quiet, out, err, calibration, calibration_path,
                         /*until_decided_gate=*/false);
}

int guarded_ab(const std::function<int()>& run, std::ostream& err) {
  try {
    return run();
  } catch (const IoError&) {
    // ab could not run or record its pair: no verdict, and not one to read as a regression.
    return side_failed_exit_code(report_error(std::current_exception(), err));
  } catch (const JobError&) {
    return side_failed_exit_code(report_error(std::current_exception(), err));
  }
}

namespace {

// `ab --until-decided`: pairs one at a time (run_until_decided()), then the last look's report.
int until_decided(const AbRunOptions& options, const Gate& gate,
                  const std::optional<Calibration>& calibration, std::ostream& out,
                  std::ostream& err) {
  const SequentialPairs s = run_until_decided(options.pair, gate.compare, options.max_pairs);
  if (s.runs.exit_code != 0 || s.looks == 0) {
    return report_ab(s.runs, gate, options.pair.out_dir, options.quiet, out, err, calibration,
                     options.calibration);
  }
  // The last look's comparison is the report's: made at the last look's level.
  Gate last = gate;
  last.compare.alpha = s.level;
  const int code =
      report_compared(s.runs, s.comparison, last, options.pair.out_dir, options.quiet, out, err,
                      calibration, options.calibration, /*until_decided_gate=*/true);
  char level[64];
  std::snprintf(level, sizeof level, "%.3g of alpha %g", s.level, gate.compare.alpha);
  out << "\nuntil decided: " << (s.settled() ? "settled after " : "not settled after ") << s.looks
      << " of at most " << options.max_pairs << " pairs; this look's level " << level
      << " (Lan-DeMets alpha spending, O'Brien-Fleming-like)\n";
  out.flush();
  return code;
}

}  // namespace

int run_ab(const AbRunOptions& options, std::ostream& out, std::ostream& err) {
  options.validate();  // before anything runs
  Gate gate = options.gate;
  gate.compare = options.pair.compare_options(gate.compare);
  std::optional<Calibration> calibration;
  if (!options.calibration.empty()) {
    calibration = read_calibration(options.calibration);
    if (calibration->until_decided != options.until_decided) {
      err << "recompdiag: warning: " << options.calibration << " was calibrated "
          << (calibration->until_decided ? "with" : "without")
          << " --until-decided and this gate runs " << (options.until_decided ? "with" : "without")
          << " it: its rates are another gate's\n";
    } else if (options.until_decided && calibration->max_pairs != options.max_pairs) {
      err << "recompdiag: warning: " << options.calibration << " was calibrated with --max-pairs "
          << calibration->max_pairs << " and this gate runs " << options.max_pairs
          << ": each look's level differs, its rates are another gate's\n";
    }
    if (calibration->compile_spread && !gate.compare.compile_spread) {
      gate.compare.compile_spread = calibration->compile_spread;
      gate.compare.compile_spread_df = calibration->compile_spread_df;
    }
  }
  return guarded_ab(
      [&] {
        if (options.until_decided) return until_decided(options, gate, calibration, out, err);
        return report_ab(run_ab_commands(options.pair), gate, options.pair.out_dir, options.quiet,
                         out, err, calibration, options.calibration);
      },
      err);
}

}  // namespace recompdiag::runner
