#include "recompdiag/core/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix + "." + it.key(), out);
    return;
  }
  out[prefix] = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> header_facts(const RunHeader& h) {
  std::map<std::string, std::string> out;
  flatten(h.config, "config", out);
  // Header facts the config already holds are listed once, under config.
  auto add = [&](const std::string& key, const std::string& value) {
    if (!out.count("config." + key)) out[key] = value;
  };
  add("mode", h.mode);
  add("optimizer_handoff", h.optimizer_handoff);
  add("device_used", h.device_used);
  add("torch_version", h.torch_version);
  add("seed", std::to_string(h.seed));
  add("step_timing", h.step_timing);
  return out;
}

std::vector<ConfigDifference> diff_headers(const RunHeader& a, const RunHeader& b) {
  const auto fa = header_facts(a);
  const auto fb = header_facts(b);
  std::set<std::string> keys;
  for (const auto& [k, v] : fa) keys.insert(k);
  for (const auto& [k, v] : fb) keys.insert(k);
  std::vector<ConfigDifference> out;
  for (const auto& k : keys) {
    auto ia = fa.find(k);
    auto ib = fb.find(k);
    std::string va = ia == fa.end() ? "(absent)" : ia->second;
    std::string vb = ib == fb.end() ? "(absent)" : ib->second;
    if (va != vb) out.push_back({k, va, vb});
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string format_p(double p) { return p < 0.001 ? "p < 0.001" : fmt("p = %.3f", p); }

PhaseComparison compare_phase(const PhaseAnalysis& pa, const PhaseAnalysis& pb,
                              const CompareOptions& o) {
  PhaseComparison pc;
  pc.phase = pa.phase;
  pc.n_a = pa.steady.n;
  pc.n_b = pb.steady.n;
  pc.median_a_ms = pa.steady.median_ms;
  pc.median_b_ms = pb.steady.median_ms;
  pc.p95_a_ms = pa.steady.p95_ms;
  pc.p95_b_ms = pb.steady.p95_ms;
  pc.ratio =
      stats::bootstrap_median_ratio_sorted(pa.steady_sorted_ms, pb.steady_sorted_ms, o.bootstrap);
  pc.mann_whitney =
      stats::mann_whitney_u_sorted(pa.steady_sorted_ms, pb.steady_sorted_ms, o.min_samples);
  const double r = pc.ratio.ratio;
  const bool significant = pc.mann_whitney.p < o.alpha;
  const std::string figures = fmt("B/A %.3f", r) + fmt(" (95%% CI %.3f", pc.ratio.low) +
                              fmt("-%.3f, ", pc.ratio.high) + format_p(pc.mann_whitney.p) + ")";
  const std::string threshold = fmt("%.1f%%", o.threshold * 100.0);
  if (r > 1.0 + o.threshold && pc.ratio.low > 1.0 && significant) {
    pc.verdict = Verdict::kRegression;
    pc.reason = "slower beyond the " + threshold + " threshold: " + figures;
  } else if (r < 1.0 - o.threshold && pc.ratio.high < 1.0 && significant) {
    pc.verdict = Verdict::kImprovement;
    pc.reason = "faster beyond the " + threshold + " threshold: " + figures;
  } else if (std::abs(r - 1.0) <= o.threshold) {
    pc.reason = "within the " + threshold + " noise threshold: " + figures;
  } else {
    pc.reason = "beyond the " + threshold + " threshold but not significant: " + figures;
  }
  return pc;
}

}  // namespace

void CompareOptions::validate() const {
  if (!(threshold >= 0.0 && threshold < 1.0)) {
    throw InputError("--threshold must be a percentage in [0, 100), got " +
                     fmt("%g", threshold * 100.0));
  }
  if (!(alpha > 0.0 && alpha < 1.0))
    throw InputError("--alpha must be in (0, 1), got " + fmt("%g", alpha));
  if (!(bootstrap.confidence > 0.0 && bootstrap.confidence < 1.0)) {
    throw InputError("--confidence must be in (0, 1), got " + fmt("%g", bootstrap.confidence));
  }
  if (bootstrap.resamples < 1) {
    throw InputError("--resamples must be >= 1, got " + std::to_string(bootstrap.resamples));
  }
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNoChange:
      return "no_change";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
  }
  return "no_change";
}

int exit_code_for(Verdict verdict) { return verdict == Verdict::kRegression ? 1 : 0; }

Comparison compare_runs(const RunFile& a, const RunFile& b, const CompareOptions& options) {
  std::error_code ec;
  if (!a.path.empty() && std::filesystem::equivalent(a.path, b.path, ec) && !ec) {
    throw InputError(b.path + ": the same file as " + a.path +
                     "; compare needs two different runs (baseline first)");
  }
  if (a.steps.empty()) throw InputError(a.path + ": no step records; nothing to compare");
  if (b.steps.empty()) throw InputError(b.path + ": no step records; nothing to compare");

  Comparison c;
  c.options = options;
  // The two analyses are independent; on a million steps each, two cores halve the wait.
  auto future_b = std::async(std::launch::async, [&] { return analyze_run(b, options.analysis); });
  c.a = analyze_run(a, options.analysis);
  c.b = future_b.get();

  // Phases named by steps or phase_start events of either run must have steps in both.
  std::set<int> phases;
  for (const auto* ra : {&c.a, &c.b}) {
    for (const auto& p : ra->phases) phases.insert(p.phase);
  }
  for (const RunFile* run : {&a, &b}) {
    for (const auto& e : run->events) {
      if (e.kind == EventKind::kPhaseStart) phases.insert(e.phase);
    }
  }
  for (int phase : phases) {
    const auto ia = find_phase(c.a, phase);
    const auto ib = find_phase(c.b, phase);
    if (!ia || !ib) {
      const RunAnalysis& missing = ia ? c.b : c.a;
      const RunAnalysis& other = ia ? c.a : c.b;
      const auto io = find_phase(other, phase);
      throw InputError(
          missing.path + ": no steps in phase " + std::to_string(phase) +
          (io ? " (" + other.path + " has " + std::to_string(other.phases[*io].all.n) + ")"
              : " (it has a phase_start event but no steps)") +
          "; cannot compare");
    }
    PhaseComparison pc = compare_phase(c.a.phases[*ia], c.b.phases[*ib], options);
    for (const auto* r : {&c.a, &c.b}) {
      const PhaseAnalysis& pa = r->phases[*(r == &c.a ? ia : ib)];
      if (std::abs(pa.drift_ratio - 1.0) > options.drift_warning) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%+.0f%%", (pa.drift_ratio - 1.0) * 100.0);
        c.warnings.push_back(r->path + ": phase " + std::to_string(phase) +
                             "'s steady step time drifted " + buf +
                             " from its first half to its second (a busy machine?); the verdict "
                             "may reflect the conditions, not the code");
      }
    }
    if (pc.n_a < options.min_samples || pc.n_b < options.min_samples) {
      c.warnings.push_back("phase " + std::to_string(phase) + ": only " + std::to_string(pc.n_a) +
                           " and " + std::to_string(pc.n_b) + " steady steps (fewer than " +
                           std::to_string(options.min_samples) + "); the verdict is weak");
    }
    c.phases.push_back(std::move(pc));
  }

  for (const SwitchCost& sa : c.a.switches) {
    for (const SwitchCost& sb : c.b.switches) {
      if (sa.to_phase != sb.to_phase) continue;
      SwitchComparison sc;
      sc.to_phase = sa.to_phase;
      sc.tax_s_a = sa.tax_s;
      sc.tax_s_b = sb.tax_s;
      sc.extra_s_a = sa.extra_s;
      sc.extra_s_b = sb.extra_s;
      sc.compile_s_a = sa.compile_s;
      sc.compile_s_b = sb.compile_s;
      sc.recovery_steps_a = sa.recovery_steps;
      sc.recovery_steps_b = sb.recovery_steps;
      sc.tax_s_difference = sb.tax_s - sa.tax_s;
      c.switches.push_back(sc);
    }
  }

  c.config_differences = diff_headers(a.header, b.header);
  std::vector<const ConfigDifference*> unexpected;
  for (const ConfigDifference& d : c.config_differences) {
    const auto& expected = options.expected_differences;
    if (std::find(expected.begin(), expected.end(), d.key) == expected.end()) {
      unexpected.push_back(&d);
    }
  }
  if (!unexpected.empty()) {
    std::string list;
    for (size_t i = 0; i < unexpected.size(); ++i) {
      if (i == 6) {
        list += ", ... (" + std::to_string(unexpected.size() - 6) + " more)";
        break;
      }
      list += (i ? ", " : "") + unexpected[i]->key + ": " + unexpected[i]->a + " vs " +
              unexpected[i]->b;
    }
    c.warnings.push_back("the runs' configurations differ: " + list);
  }
  for (const auto* ra : {&c.a, &c.b}) {
    c.warnings.insert(c.warnings.end(), ra->warnings.begin(), ra->warnings.end());
  }

  const PhaseComparison* worst = nullptr;
  for (const auto& pc : c.phases) {
    if (pc.verdict == Verdict::kRegression && (!worst || pc.ratio.ratio > worst->ratio.ratio))
      worst = &pc;
  }
  if (worst) {
    c.verdict = Verdict::kRegression;
  } else {
    for (const auto& pc : c.phases) {
      if (pc.verdict == Verdict::kImprovement && (!worst || pc.ratio.ratio < worst->ratio.ratio))
        worst = &pc;
    }
    if (worst) c.verdict = Verdict::kImprovement;
  }
  if (worst) {
    c.summary = std::string(to_string(c.verdict)) + ": phase " + std::to_string(worst->phase) +
                " steady median " + fmt("%.3g ms", worst->median_a_ms) + " -> " +
                fmt("%.3g ms", worst->median_b_ms) + ", " + worst->reason;
  } else {
    c.summary = "no_change: every phase's steady median is within the " +
                fmt("%.1f%%", options.threshold * 100.0) + " threshold or not significant";
  }
  return c;
}

}  // namespace recompdiag
