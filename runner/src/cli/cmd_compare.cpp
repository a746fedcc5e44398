// `recompdiag compare A.jsonl B.jsonl`: the A/B verdict a CI can gate on.

#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/noise_profile.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/reports/trace_writer.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::runner::cli {

namespace {

struct CompareCommand {
  std::string a;  // positional, one per side: `compare A.jsonl B.jsonl`
  std::string b;
  std::vector<std::string> a_specs;  // --a, repeatable: files, directories, globs
  std::vector<std::string> b_specs;
  std::string format = "md";
  bool format_given = false;
  std::string out;
  GateFlags gate;
  double confidence = 95.0;
  std::optional<double> run_noise_pct;
  std::string noise_profile;
  bool paired = false;
  bool turns = false;
  std::string trace;
};

// The format: --format when given, else the --out file's extension (.html, .json), else md.
reports::ReportFormat report_format(const CompareCommand& s) {
  if (!s.format_given && !s.out.empty()) {
    auto ends_with = [&](const std::string& ext) {
      return s.out.size() >= ext.size() &&
             s.out.compare(s.out.size() - ext.size(), ext.size(), ext) == 0;
    };
    if (ends_with(".html") || ends_with(".htm")) return reports::ReportFormat::kHtml;
    if (ends_with(".json")) return reports::ReportFormat::kJson;
  }
  return reports::parse_report_format(s.format);
}

Gate compare_gate(const CompareCommand& s) {
  Gate gate = to_gate(s.gate);
  CompareOptions& o = gate.compare;
  o.bootstrap.confidence = s.confidence / 100.0;
  if (s.run_noise_pct && !s.noise_profile.empty()) {
    throw InputError("give --run-noise or --noise-profile, not both");
  }
  if (s.run_noise_pct) o.run_noise = *s.run_noise_pct / 100.0;
  if (!s.noise_profile.empty()) {
    apply_noise_profile(read_noise_profile(s.noise_profile), s.noise_profile, o);
  }
  o.paired = s.paired;
  o.turns = s.turns;
  o.validate();
  return gate;
}

// One side's run files: the positional argument or --a/--b (not both), expanded.
std::vector<std::string> side_paths(const std::string& positional,
                                    const std::vector<std::string>& specs, const char* side,
                                    const std::string& flag) {
  if (!positional.empty() && !specs.empty()) {
    throw InputError(std::string("give side ") + side + " either as an argument or with " + flag +
                     ", not both");
  }
  if (positional.empty() && specs.empty()) {
    throw InputError(std::string("no run files for side ") + side + ": give A.jsonl B.jsonl or " +
                     "--a/--b (files, directories or globs)");
  }
  return expand_run_paths(positional.empty() ? specs : std::vector<std::string>{positional}, flag);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<CompareCommand>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare the runs of B against the baseline runs of A: per phase, B/A of steady step times "
      "with an interval and tests (runs as the unit with several runs per side, else a block "
      "bootstrap), counts compared exactly, the recompile tax and what caused each slow "
      "stretch. Exit 0: no regression (inconclusive warns); 1: B regresses beyond the "
      "threshold with significance, or a --fail-on count grew; 2: bad input");
  cmd->add_option("A", state->a, "Baseline run file (JSON Lines)");
  cmd->add_option("B", state->b, "Run file compared against the baseline");
  cmd->add_option("--a", state->a_specs,
                  "Baseline runs: a run file, a directory (its *.jsonl) or a quoted glob; "
                  "repeatable. Two or more runs per side make the run the unit of replication. The "
                  "rank files of a data-parallel job (NAME.rank*.jsonl) are one run: its slowest "
                  "rank per step");
  cmd->add_option("--b", state->b_specs, "Runs compared against the baseline, as --a");
  CLI::Option* format =
      cmd->add_option("--format", state->format,
                      "Report format: md, html or json (default: from --out's extension, else md)");
  cmd->add_option("--out", state->out, "Write the report to FILE (atomically) instead of stdout");
  cmd->add_option("--confidence", state->confidence, "Confidence level of the intervals, percent")
      ->capture_default_str();
  cmd->add_option("--noise-profile", state->noise_profile,
                  "One independent run per side: the run-to-run spread measured on this machine "
                  "(`recompdiag bench noise` writes the file). Without it, or --run-noise, one run "
                  "per side gives no time verdict: no within-run test sees a shift between runs");
  cmd->add_option("--run-noise", state->run_noise_pct,
                  "One independent run per side: the run-to-run spread of a steady median in "
                  "percent, known from elsewhere (a measured --noise-profile is better)");
  cmd->add_flag("--paired", state->paired,
                "Several runs per side given in pair order (A_i and B_i ran together, as `ab` "
                "interleaves them): test the per-pair ratios, so that the load a pair shared "
                "cancels");
  cmd->add_flag("--turns", state->turns,
                "The runs of each pair took turns (as `ab` runs them): one pair is tested turn "
                "by turn, step by step where both run headers say so (turn_every_steps), else "
                "epoch by epoch, so that the machine's state both runs saw cancels");
  add_gate_flags(*cmd, state->gate);
  cmd->add_option("--trace", state->trace,
                  "Also write a Chrome trace-event JSON of both runs to FILE (opens in Perfetto)");
  cmd->callback([state, format, &ctx] {
    state->format_given = format->count() > 0;
    const CompareCommand& s = *state;
    const Gate gate = compare_gate(s);
    const auto renderer = reports::make_renderer(report_format(s));
    const std::vector<std::string> paths_a = side_paths(s.a, s.a_specs, "A", "--a");
    const std::vector<std::string> paths_b = side_paths(s.b, s.b_specs, "B", "--b");
    const Comparison c = compare_run_paths(paths_a, paths_b, gate.compare);
    for (const std::string& w : reports::warnings(c))
      std::cerr << "recompdiag: warning: " << w << "\n";
    const int exit_code = gate.exit_code(c, std::cerr);
    if (s.out.empty()) {
      renderer->render(c, std::cout);
      std::cout.flush();
    } else {
      reports::write_file_atomically(s.out, [&](std::ostream& out) { renderer->render(c, out); });
      std::cerr << "recompdiag: " << to_string(c.verdict) << "; wrote " << s.out << "\n";
    }
    if (!s.trace.empty()) {
      const RunFile trace_a = first_run(paths_a);
      const RunFile trace_b = first_run(paths_b);
      reports::write_file_atomically(s.trace, [&](std::ostream& out) {
        reports::write_chrome_trace(trace_a, trace_b, c, out);
      });
    }
    ctx.exit_code = exit_code;
  });
}

}  // namespace recompdiag::runner::cli
