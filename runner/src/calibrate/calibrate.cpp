// `recompdiag calibrate`: the gate's error rates measured on the user's own job and runner.

#include "recompdiag/runner/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "recompdiag/core/error.h"
#include "recompdiag/core/planted_slowdown.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/core/this_host.h"
#include "recompdiag/core/version.h"
#include "recompdiag/runner/ab_commands.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/until_decided.h"

namespace recompdiag::runner {

namespace {

constexpr int kSchema = 1;

std::string format(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One pair of the calibration: the job against itself (planted: B slowed down).
AbCommandsOptions pair_options(const CalibrateOptions& o, bool planted, int k) {
  AbCommandsOptions p;
  p.a = {"a", o.command};
  // `export` reaches every command of the line (`cd x && python train.py` too).
  p.b = {"b", planted ? std::string("export ") + kPlantSlowdownVar + "=" +
                            format("%g", o.slowdown_pct) + "; " + o.command
                      : o.command};
  p.out_dir = o.out_dir + (planted ? "/planted-" : "/same-") + std::to_string(k);
  p.repeats = 1;
  p.turn_every_steps = o.turn_every_steps;
  p.cpus = o.cpus;
  p.turn_timeout_ms = o.turn_timeout_ms;
  p.start_wait_ms = o.start_wait_ms;
  p.quiet = true;
  return p;
}

// The steps of each phase of the job (of its first run of A): its shape.
std::vector<int64_t> phase_steps_of(const Comparison& c) {
  std::vector<int64_t> steps;
  for (const PhaseAnalysis& p : c.a.phases) steps.push_back(p.last_step - p.first_step + 1);
  return steps;
}

std::string shape_words(const std::string& mode, const std::vector<int64_t>& steps) {
  std::string words = "mode '" + mode + "', " + std::to_string(steps.size()) + " phase" +
                      (steps.size() == 1 ? "" : "s") + " of ";
  for (size_t i = 0; i < steps.size(); ++i) {
    words += (i == 0 ? "" : ", ") + std::to_string(steps[i]);
  }
  return words + " steps";
}

// The phase a slowdown is hardest to find in: the one whose steady test has the widest interval.
const PhaseComparison* least_sensitive(const Comparison& c) {
  const PhaseComparison* worst = nullptr;
  for (const PhaseComparison& pc : c.phases) {
    if (!worst || pc.test.se_log > worst->test.se_log) worst = &pc;
  }
  return worst;
}

// "no change; B/A 1.004 (0.991-1.018) in phase 1": the phase whose ratio is furthest from 1.
std::string pair_words(const Comparison& c) {
  std::string words = to_string(c.verdict);
  std::replace(words.begin(), words.end(), '_', ' ');
  const PhaseComparison* far = nullptr;
  for (const PhaseComparison& pc : c.phases) {
    if (!far || std::fabs(std::log(pc.test.ratio)) > std::fabs(std::log(far->test.ratio))) {
      far = &pc;
    }
  }
  if (far) {
    words += "; steady B/A " + format("%.3f", far->test.ratio) + " (" +
             format("%.3f", far->test.low) + "-" + format("%.3f", far->test.high) + ") in phase " +
             std::to_string(far->phase);
  }
  return words;
}

// One trial of the calibration: a pair (or, until decided, a sequence of pairs) and the
// comparison that decided it.
struct Trial {
  int exit_code = 0;  ///< As run_ab_commands()'s: a side failed.
  int pairs = 0;      ///< Pairs run.
  Comparison comparison;
  Comparison first_pair;  ///< Until decided: the first pair alone (what sizes the gate).
};

Trial run_trial(const CalibrateOptions& o, bool planted, int k) {
  const AbCommandsOptions pair = pair_options(o, planted, k);
  const CompareOptions compare = pair.compare_options(o.gate.compare);
  Trial t;
  if (o.until_decided) {
    SequentialPairs s = run_until_decided(pair, compare, o.max_pairs);
    t.exit_code = s.runs.exit_code;
    t.pairs = s.looks;
    t.comparison = std::move(s.comparison);
    t.first_pair = std::move(s.first);
    return t;
  }
  const AbExperimentResult runs = run_ab_commands(pair);
  t.exit_code = runs.exit_code;
  t.pairs = 1;
  if (runs.exit_code == 0) t.comparison = compare_run_paths(runs.a_paths, runs.b_paths, compare);
  return t;
}

bool is_time_verdict(Verdict v) { return v == Verdict::kRegression || v == Verdict::kImprovement; }

// What the same-job pairs say of the gate's sensitivity and of a compile's spread.
struct SameJobNoise {
  std::vector<double> se_logs;      // the least sensitive phase's steady SE, per pair
  std::vector<double> phase_steps;  // that phase's steps, per pair
  double compile_sum = 0.0;         // sum of pairs * log(matched compile ratio)^2
  int64_t compile_looks = 0;        // phases of pairs that had matched compiles
};

void add_noise(SameJobNoise& noise, const Comparison& c) {
  if (const PhaseComparison* pc = least_sensitive(c)) {
    noise.se_logs.push_back(pc->test.se_log);
    for (const PhaseAnalysis& p : c.a.phases) {
      if (p.phase == pc->phase) noise.phase_steps.push_back(p.last_step - p.first_step + 1);
    }
  }
  // Under A against A, log(ratio) of m matched compile pairs has variance spread^2 / m.
  for (const PhaseComparison& pc : c.phases) {
    if (pc.matched_compile_pairs > 0 && pc.matched_compile_ratio > 0.0) {
      const double l = std::log(pc.matched_compile_ratio);
      noise.compile_sum += static_cast<double>(pc.matched_compile_pairs) * l * l;
      ++noise.compile_looks;
    }
  }
}

// Fills the detectable effect and the steps needed from the same-job pairs' noise.
void size_the_gate(Calibration& cal, const SameJobNoise& noise, const Gate& gate) {
  const double se = median(noise.se_logs);
  cal.phase_steps = static_cast<int64_t>(std::llround(median(noise.phase_steps)));
  const double z_alpha = stats::normal_quantile(1.0 - gate.compare.alpha / 2.0);
  const double z_power = stats::normal_quantile(gate.compare.power);
  const double bar = std::log1p(gate.compare.threshold);
  // A regression needs B/A above 1 + threshold and significance: 80% power where the effect
  // clears the larger of the two bars by z_power standard errors.
  cal.detectable = std::expm1(std::max(bar, z_alpha * se) + z_power * se);
  const double effect = std::log1p(cal.slowdown_pct / 100.0);
  if (effect <= bar || !(se > 0.0)) {
    cal.steps_needed = effect <= bar ? 0 : cal.phase_steps;  // 0: at or below the threshold
  } else {
    const double se_needed = std::min((effect - bar) / z_power, effect / (z_alpha + z_power));
    const double scale = (se / se_needed) * (se / se_needed);
    cal.steps_needed =
        static_cast<int64_t>(std::ceil(static_cast<double>(cal.phase_steps) * scale));
    // The interval's scaling holds for phases long enough to be tested at all.
    cal.steps_needed = std::max(cal.steps_needed, gate.compare.min_samples);
  }
  if (noise.compile_looks >= 2) {
    cal.compile_spread = std::sqrt(noise.compile_sum / static_cast<double>(noise.compile_looks));
    cal.compile_spread_df = static_cast<double>(noise.compile_looks);
  }
}

nlohmann::ordered_json rate_json(const MeasuredRate& r) {
  return {{"events", r.events}, {"pairs", r.n}, {"low", r.low}, {"high", r.high}};
}

MeasuredRate rate_from_json(const nlohmann::json& j) {
  return wilson_rate(j.at("events").get<int64_t>(), j.at("pairs").get<int64_t>());
}

std::string percent(double fraction) {
  const double pct = fraction * 100.0;
  return format(pct < 10.0 && pct != std::floor(pct) ? "%.1f%%" : "%.0f%%", pct);
}

std::string rate_words(const MeasuredRate& r) {
  return percent(r.rate) + " of " + std::to_string(r.n) + " (95% CI " + percent(r.low) + "-" +
         percent(r.high) + ")";
}

}  // namespace

void CalibrateOptions::validate() const {
  if (command.find("{out}") == std::string::npos) {
    throw InputError("calibrate --cmd must contain {out}, where the job writes its run file: " +
                     command);
  }
  if (pairs < 2 || pairs > 200) {
    throw InputError("--pairs must be in [2, 200], got " + std::to_string(pairs));
  }
  if (!(slowdown_pct > 0.0 && slowdown_pct <= 200.0)) {
    throw InputError("--slowdown must be a percentage in (0, 200], got " +
                     format("%g", slowdown_pct));
  }
  if (out_dir.empty()) throw InputError("--out-dir must not be empty");
  const AbCommandsOptions pair = pair_options(*this, /*planted=*/true, 1);
  pair.compare_options(gate.compare).validate();
  pair.validate();
  if (until_decided) check_max_pairs(max_pairs);
}

MeasuredRate wilson_rate(int64_t events, int64_t n, double confidence) {
  if (n <= 0 || events < 0 || events > n) {
    throw std::invalid_argument("wilson_rate: need 0 <= events <= n and n > 0");
  }
  MeasuredRate r;
  r.events = events;
  r.n = n;
  const double nn = static_cast<double>(n);
  r.rate = static_cast<double>(events) / nn;
  const double z = stats::normal_quantile(1.0 - (1.0 - confidence) / 2.0);
  const double z2 = z * z;
  const double centre = (r.rate + z2 / (2.0 * nn)) / (1.0 + z2 / nn);
  const double half =
      z / (1.0 + z2 / nn) * std::sqrt(r.rate * (1.0 - r.rate) / nn + z2 / (4.0 * nn * nn));
  r.low = events == 0 ? 0.0 : std::max(0.0, centre - half);
  r.high = events == n ? 1.0 : std::min(1.0, centre + half);
  return r;
}

CalibrationRun run_calibration(const CalibrateOptions& o, std::ostream& progress) {
  o.validate();
  const auto start = std::chrono::steady_clock::now();
  CalibrationRun run;
  Calibration& cal = run.calibration;
  cal.command = o.command;
  cal.host = this_host_name();
  cal.created = utc_now_iso();
  cal.threshold = o.gate.compare.threshold;
  cal.alpha = o.gate.compare.alpha;
  cal.slowdown_pct = o.slowdown_pct;
  cal.until_decided = o.until_decided;
  cal.max_pairs = o.until_decided ? o.max_pairs : 1;
  int64_t false_verdicts = 0;
  int64_t detections = 0;
  SameJobNoise noise;
  for (int k = 1; k <= o.pairs; ++k) {
    for (const bool planted : {false, true}) {
      const Trial trial = run_trial(o, planted, k);
      if (trial.exit_code != 0) {
        run.exit_code = side_failed_exit_code(trial.exit_code);
        return run;
      }
      const Comparison& c = trial.comparison;
      (planted ? cal.planted_pairs_run : cal.same_pairs_run) += trial.pairs;
      if (cal.mode.empty()) {
        cal.mode = c.a.header.mode;
        cal.phase_steps_seen = phase_steps_of(c);
      }
      if (planted) {
        if (c.verdict == Verdict::kRegression) ++detections;
        if (c.verdict == Verdict::kInconclusive) ++cal.planted_not_settled;
      } else {
        if (is_time_verdict(c.verdict)) ++false_verdicts;
        if (c.verdict == Verdict::kInconclusive) ++cal.same_not_settled;
        // One pair's noise sizes the gate, whichever look decided the trial.
        add_noise(noise, o.until_decided ? trial.first_pair : c);
      }
      progress << (o.until_decided ? "trial " : "pair ") << k << "/" << o.pairs
               << (planted ? ", planted " : ", same job: ")
               << (planted ? format("%g%%: ", o.slowdown_pct) : "") << pair_words(c)
               << (o.until_decided ? " (" + std::to_string(trial.pairs) + " pair" +
                                         (trial.pairs == 1 ? ")" : "s)")
                                   : "")
               << "\n";
      progress.flush();
    }
  }
  cal.false_verdicts = wilson_rate(false_verdicts, o.pairs);
  cal.detections = wilson_rate(detections, o.pairs);
  size_the_gate(cal, noise, o.gate);
  cal.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

nlohmann::ordered_json calibration_json(const Calibration& c) {
  nlohmann::ordered_json j = {
      {"type", "calibration"},
      {"schema", kSchema},
      {"tool_version", kToolVersion},
      {"command", c.command},
      {"host", c.host},
      {"created", c.created},
      {"threshold", c.threshold},
      {"alpha", c.alpha},
      {"slowdown_pct", c.slowdown_pct},
      {"false_verdict_rate", c.false_verdicts.rate},
      {"detection_rate", c.detections.rate},
      {"false_verdicts", rate_json(c.false_verdicts)},
      {"detections", rate_json(c.detections)},
      {"same_not_settled", c.same_not_settled},
      {"planted_not_settled", c.planted_not_settled},
      {"until_decided", c.until_decided},
      {"max_pairs", c.max_pairs},
      {"same_pairs_run", c.same_pairs_run},
      {"planted_pairs_run", c.planted_pairs_run},
      {"detectable_slowdown", c.detectable},
      {"phase_steps", c.phase_steps},
      {"steps_needed", c.steps_needed},
      {"compile_spread", c.compile_spread ? nlohmann::ordered_json(*c.compile_spread)
                                          : nlohmann::ordered_json(nullptr)},
      {"compile_spread_df", c.compile_spread_df},
      {"job", {{"mode", c.mode}, {"phase_steps", c.phase_steps_seen}}},
      {"wall_s", c.wall_s},
  };
  return j;
}

Calibration read_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the calibration file");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("type", std::string()) != "calibration") {
    throw InputError(path + ": not a calibration file (what `recompdiag calibrate` writes)");
  }
  if (!j.contains("schema") || j["schema"] != kSchema) {
    throw InputError(path + ": calibration schema " +
                     (j.contains("schema") ? j["schema"].dump() : std::string("(absent)")) +
                     " is not " + std::to_string(kSchema));
  }
  Calibration c;
  try {
    c.command = j.at("command").get<std::string>();
    c.host = j.value("host", std::string());
    c.created = j.value("created", std::string());
    c.threshold = j.at("threshold").get<double>();
    c.alpha = j.at("alpha").get<double>();
    c.slowdown_pct = j.at("slowdown_pct").get<double>();
    c.false_verdicts = rate_from_json(j.at("false_verdicts"));
    c.detections = rate_from_json(j.at("detections"));
    c.same_not_settled = j.at("same_not_settled").get<int64_t>();
    c.planted_not_settled = j.at("planted_not_settled").get<int64_t>();
    // Files of 0.8 have none of these: each trial was one pair.
    c.until_decided = j.value("until_decided", false);
    c.max_pairs = j.value("max_pairs", 1);
    c.same_pairs_run = j.value("same_pairs_run", c.false_verdicts.n);
    c.planted_pairs_run = j.value("planted_pairs_run", c.detections.n);
    c.detectable = j.at("detectable_slowdown").get<double>();
    c.phase_steps = j.at("phase_steps").get<int64_t>();
    c.steps_needed = j.at("steps_needed").get<int64_t>();
    if (!j.at("compile_spread").is_null()) c.compile_spread = j["compile_spread"].get<double>();
    c.compile_spread_df = j.at("compile_spread_df").get<double>();
    c.mode = j.at("job").at("mode").get<std::string>();
    c.phase_steps_seen = j.at("job").at("phase_steps").get<std::vector<int64_t>>();
    c.wall_s = j.value("wall_s", 0.0);
  } catch (const std::exception& e) {
    throw InputError(path + ": malformed calibration file: " + e.what());
  }
  if (c.compile_spread && !(*c.compile_spread > 0.0 && *c.compile_spread < 5.0)) {
    throw InputError(path + ": compile_spread must be in (0, 5)");
  }
  return c;
}

void check_calibration_fits(const Calibration& c, const Comparison& comparison,
                            const std::string& path) {
  const std::vector<int64_t> steps = phase_steps_of(comparison);
  bool fits = comparison.a.header.mode == c.mode && steps.size() == c.phase_steps_seen.size();
  for (size_t i = 0; fits && i < steps.size(); ++i) {
    fits = steps[i] * 2 >= c.phase_steps_seen[i] && steps[i] <= c.phase_steps_seen[i] * 2;
  }
  if (!fits) {
    throw InputError(path + ": a calibration of another job (" +
                     shape_words(c.mode, c.phase_steps_seen) + ") than this one (" +
                     shape_words(comparison.a.header.mode, steps) +
                     "); run `recompdiag calibrate` on this job");
  }
}

std::string calibration_line(const Calibration& c) {
  std::string line = "calibrated on " + (c.host.empty() ? std::string("this runner") : c.host) +
                     " (" + c.created.substr(0, 10) + ", " + std::to_string(c.false_verdicts.n) +
                     " + " + std::to_string(c.detections.n) +
                     (c.until_decided ? " trials of the job, pairs until decided (at most " +
                                            std::to_string(c.max_pairs) + ")"
                                      : " pairs of the job") +
                     "): false verdicts " + rate_words(c.false_verdicts) + "; a " +
                     format("%g", c.slowdown_pct) + "% slowdown found in " +
                     rate_words(c.detections) + "; 80% power from " + percent(c.detectable);
  return line;
}

std::string calibration_advice(const Calibration& c) {
  if (!(c.false_verdicts.low > c.alpha)) return "";
  const std::string errs = "errs more often than alpha " + format("%g", c.alpha) +
                           " on this runner (false verdicts " + rate_words(c.false_verdicts) + ")";
  if (!c.until_decided) {
    return "one pair per verdict " + errs +
           ": gate with `ab --until-decided` and calibrate that gate (`calibrate "
           "--until-decided`)";
  }
  return "the gate, pairs until decided, " + errs +
         ": gate on a quieter runner (CPUs of its own), or with a larger --threshold";
}

}  // namespace recompdiag::runner
