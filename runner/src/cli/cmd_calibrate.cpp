// `recompdiag calibrate --cmd "CMD {out}"`: how far to trust the gate on this job, on this runner.

#include <iostream>
#include <memory>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/runner/ab_run.h"
#include "recompdiag/runner/calibrate.h"

namespace recompdiag::runner::cli {

namespace {

struct CalibrateCommand {
  CalibrateOptions options;
  double threshold_pct = 5.0;
  double start_wait_s = 60.0;
  double turn_timeout_s = static_cast<double>(kDefaultTurnTimeoutMs) / 1000.0;
  std::string json;
};

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

// The figures, one a line, after the pairs' lines.
void print_calibration(const Calibration& c, const std::string& json, std::ostream& out) {
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.0f s", c.wall_s);
  out << "\n" << calibration_line(c) << "\n";
  const char* trials = c.until_decided ? " trials" : " pairs";
  out << "  same job against itself: " << c.false_verdicts.events << " time verdict(s) in "
      << c.false_verdicts.n << trials << ", " << c.same_not_settled << " not settled\n";
  out << "  planted " << c.slowdown_pct << "% slowdown: found in " << c.detections.events << " of "
      << c.detections.n << trials << ", " << c.planted_not_settled << " not settled\n";
  if (c.until_decided) {
    out << "  pairs run until decided (at most " << c.max_pairs << " a trial): " << c.same_pairs_run
        << " for the same job, " << c.planted_pairs_run << " planted\n";
  }
  out << "  80% power from a slowdown of " << pct(c.detectable) << " (threshold "
      << pct(c.threshold) << ", alpha " << c.alpha << "), with phases of " << c.phase_steps
      << " steps" << (c.until_decided ? " (one pair at the full alpha)" : "") << "\n";
  if (c.steps_needed == 0) {
    out << "  a " << c.slowdown_pct
        << "% slowdown is at or below the threshold: no phase length finds it\n";
  } else {
    out << "  steps a phase needs to find a " << c.slowdown_pct
        << "% slowdown with 80% power: " << c.steps_needed << "\n";
  }
  if (c.compile_spread) {
    out << "  a compile's time between two processes of the job spreads by "
        << pct(*c.compile_spread) << " (SD of the log ratio, " << c.compile_spread_df
        << " df): ab --calibration judges "
        << "matched compiles against it\n";
  } else {
    out << "  a compile's time spread: not measured (fewer than 2 pairs dominated by their "
           "compiles)\n";
  }
  if (const std::string advice = calibration_advice(c); !advice.empty()) {
    out << "  " << advice << "\n";
  }
  out << "calibrated in " << wall << "; written: " << json << "\n";
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<CalibrateCommand>();
  CalibrateOptions& o = state->options;
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure how far to trust the gate on your own job, on this runner: the job against "
      "itself in --pairs pairs that take turns as ab's do (every time verdict is a false one), "
      "and against itself slowed down by --slowdown percent (RECOMPDIAG_PLANT_SLOWDOWN, which "
      "every Monitor honours: no code changes) in as many, interleaved. Prints the false-verdict "
      "rate and the detection rate with their intervals, the smallest slowdown found with 80% "
      "power and the steps a phase needs; writes them as JSON for ab --calibration. Exit 0; 2 "
      "bad input; 4 a side's run failed");
  cmd->add_option("--cmd", o.command,
                  "Your job as a shell command that trains once and writes its run file to {out}, "
                  "e.g. 'python train.py --out {out}'")
      ->required();
  cmd->add_option("--pairs", o.pairs, "Pairs of the job against itself, and as many planted")
      ->capture_default_str();
  cmd->add_option("--slowdown", o.slowdown_pct,
                  "The planted slowdown, percent of the median step, in (0, 200]")
      ->capture_default_str();
  cmd->add_option("--json", state->json,
                  "Where the calibration goes (default DIR/calibration.json), atomically")
      ->check(writable_file(false));
  cmd->add_option("--out-dir", o.out_dir,
                  "Directory for the pairs' run files (DIR/same-K, "
                  "DIR/planted-K)")
      ->capture_default_str();
  cmd->add_option("--threshold", state->threshold_pct, "The gate's threshold, percent, as ab's")
      ->capture_default_str();
  cmd->add_option("--alpha", o.gate.compare.alpha, "The gate's alpha, as ab's")
      ->capture_default_str();
  cmd->add_option("--turn-every", o.turn_every_steps, "Steps per turn, as ab's")
      ->capture_default_str();
  cmd->add_option("--cpus", o.cpus, "CPUs both runs of a pair are pinned to, as ab's")
      ->capture_default_str();
  cmd->add_option("--start-wait", state->start_wait_s,
                  "Seconds each pair's first turn waits for both runs to have started, as ab's")
      ->capture_default_str();
  cmd->add_option("--turn-timeout", state->turn_timeout_s, "As ab's")->capture_default_str();
  cmd->add_flag(
      "--until-decided", o.until_decided,
      "Each trial as `ab --until-decided` runs it: pairs until the verdict is settled, at "
      "most --max-pairs, so that the rates are that gate's");
  cmd->add_option("--max-pairs", o.max_pairs, "With --until-decided: the most pairs a trial runs")
      ->capture_default_str();
  cmd->callback([state, &ctx, cmd] {
    CalibrateOptions options = state->options;
    if (!options.until_decided && cmd->count("--max-pairs") > 0) {
      throw InputError("--max-pairs applies to --until-decided");
    }
    options.gate.compare.threshold = state->threshold_pct / 100.0;
    options.start_wait_ms = milliseconds_of_flag("--start-wait", state->start_wait_s);
    options.turn_timeout_ms = milliseconds_of_flag("--turn-timeout", state->turn_timeout_s);
    const std::string json =
        state->json.empty() ? options.out_dir + "/calibration.json" : state->json;
    ctx.exit_code = guarded_ab(
        [&] {
          const CalibrationRun run = run_calibration(options, std::cout);
          if (run.exit_code != 0) return run.exit_code;
          reports::write_file_atomically(json, calibration_json(run.calibration).dump(2) + "\n");
          print_calibration(run.calibration, json, std::cout);
          std::cout.flush();
          return 0;
        },
        std::cerr);
  });
}

}  // namespace recompdiag::runner::cli
