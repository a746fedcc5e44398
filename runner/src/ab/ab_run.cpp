// `recompdiag ab` as one call: the pairs run, compared, reported and gated.

#include "recompdiag/runner/ab_run.h"

#include <ostream>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/runner/exit_codes.h"

namespace recompdiag::runner {

void AbRunOptions::validate() const {
  pair.compare_options(gate.compare).validate();
  pair.validate();
}

int report_ab(const AbExperimentResult& runs, const Gate& gate, const std::string& out_dir,
              bool quiet, std::ostream& out, std::ostream& err) {
  if (runs.exit_code != 0) return side_failed_exit_code(runs.exit_code);
  const Comparison c = compare_run_paths(runs.a_paths, runs.b_paths, gate.compare);
  out << reports::write_reports(c, out_dir);
  if (!quiet) out << "\nreports: " << out_dir << "/report.{md,html,json}\n";
  out.flush();
  return gate.exit_code(c, err);
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

int run_ab(const AbRunOptions& options, std::ostream& out, std::ostream& err) {
  options.validate();  // before anything runs
  Gate gate = options.gate;
  gate.compare = options.pair.compare_options(gate.compare);
  return guarded_ab(
      [&] {
        return report_ab(run_ab_commands(options.pair), gate, options.pair.out_dir, options.quiet,
                         out, err);
      },
      err);
}

}  // namespace recompdiag::runner
