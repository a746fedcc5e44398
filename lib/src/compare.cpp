// compare_run_sets(): checks the runs, analyses them, compares each phase and judges the whole.
#include "recompdiag/core/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <set>

#include "detail/compare_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

// Reads the runs' analyses on up to two threads: a million steps each, two cores halve the wait.
std::vector<RunAnalysis> analyze_all(const std::vector<const ColumnarRun*>& runs,
                                     const AnalysisOptions& options) {
  std::vector<RunAnalysis> out(runs.size());
  std::vector<std::future<void>> pending;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i % 2 == 1) {
      pending.push_back(
          std::async(std::launch::async, [&, i] { out[i] = analyze_run(*runs[i], options); }));
    } else {
      out[i] = analyze_run(*runs[i], options);
    }
  }
  for (auto& f : pending) f.get();
  return out;
}

// Throws when a file is given twice (on one side or both) or a run has no steps.
void check_distinct(const std::vector<const ColumnarRun*>& all) {
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i]->steps.empty()) {
      throw InputError(all[i]->path + ": no step records; nothing to compare");
    }
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (!all[i]->path.empty() && std::filesystem::equivalent(all[i]->path, all[j]->path, ec) &&
          !ec) {
        throw InputError(all[i]->path + ": the same file as " + all[j]->path +
                         "; compare needs different runs (baseline first)");
      }
    }
  }
}

// The runs of one side must share their configuration; only the seed may differ.
void check_same_config(const std::vector<const ColumnarRun*>& side, const char* name) {
  for (size_t i = 1; i < side.size(); ++i) {
    if (const auto d = detail::config_difference_beyond_seed(side[0]->header, side[i]->header)) {
      throw InputError(side[i]->path + ": its configuration differs from " + side[0]->path +
                       " (the first run of side " + name + ") in " + d->key + ": " + d->b +
                       " here, " + d->a +
                       " there; the runs of one side must share a configuration");
    }
  }
}

int64_t phase_steady_min(const detail::SideRuns& side) {
  int64_t fewest = INT64_MAX;
  for (size_t i = 0; i < side.analyses.size(); ++i) {
    fewest = std::min(fewest, detail::phase_of(side, i).steady.n);
  }
  return fewest;
}

// The verdict of each question apart: step time, and the counted events.
void judge_questions(Comparison& c) {
  const CompareOptions& o = c.options;
  bool slower = false, faster = false, all_equivalent = !c.phases.empty();
  for (const PhaseComparison& p : c.phases) {
    const bool steady = p.p_holm < o.alpha;
    const bool whole = p.whole_p_holm < o.alpha;
    slower |= (steady && p.test.ratio > 1.0 + o.threshold) ||
              (whole && p.whole_test.ratio > 1.0 + o.threshold);
    faster |= (steady && p.test.ratio < 1.0 - o.threshold) ||
              (whole && p.whole_test.ratio < 1.0 - o.threshold);
    all_equivalent &= p.tost_p_holm < o.alpha;
  }
  c.step_time_verdict = slower           ? Verdict::kRegression
                        : faster         ? Verdict::kImprovement
                        : all_equivalent ? Verdict::kNoChange
                                         : Verdict::kInconclusive;
  bool regresses = false, improves = false, open = false;
  for (const CountChange& cc : c.count_changes) regresses |= cc.fails;
  for (const CountedCost& cost : c.counted_costs) {
    if (cost.counts.empty()) continue;
    regresses |= cost.verdict == Verdict::kRegression;
    improves |= cost.verdict == Verdict::kImprovement;
    open |= cost.verdict == Verdict::kNoChange && cost.p >= o.alpha && !cost.measured_bounds;
  }
  c.counts_verdict = regresses  ? Verdict::kRegression
                     : improves ? Verdict::kImprovement
                     : open     ? Verdict::kInconclusive
                                : Verdict::kNoChange;
}

// The verdict of the whole comparison, the phase that decides it and, for a time regression, the
// signal by which that phase differs from A's (attribution.cpp). reports::summary() words them.
void summarize(Comparison& c) {
  const CountChange* failing = nullptr;
  for (const CountChange& cc : c.count_changes) {
    if (cc.fails && !failing) failing = &cc;
  }
  auto decisive = [](const PhaseComparison& pc) { return pc.decisive_ratio; };
  auto worst = [&](Verdict v, bool highest) {
    const PhaseComparison* w = nullptr;
    for (const auto& pc : c.phases) {
      if (pc.verdict != v) continue;
      if (!w || (highest ? decisive(pc) > decisive(*w) : decisive(pc) < decisive(*w))) {
        w = &pc;
      }
    }
    return w;
  };
  const PhaseComparison* phase = nullptr;
  if ((phase = worst(Verdict::kRegression, true))) {
    c.verdict = Verdict::kRegression;
  } else if (failing) {
    c.verdict = Verdict::kRegression;
    return;
  } else if ((phase = worst(Verdict::kImprovement, false))) {
    c.verdict = Verdict::kImprovement;
  } else if ((phase = worst(Verdict::kInconclusive, true))) {
    c.verdict = Verdict::kInconclusive;
  }
  if (!phase) return;
  c.deciding_phase = phase->phase;
  const auto pa = find_phase(c.a, phase->phase);
  const auto pb = find_phase(c.b, phase->phase);
  if (c.verdict == Verdict::kRegression && !phase->counted_decides && pa && pb) {
    const auto signals =
        rank_phase_signals(c.b.phases[*pb], &c.a.phases[*pa], c.b.header.optimizer);
    if (!signals.empty()) c.deciding_signal = signals.front();
  }
}

// Throws unless each side has runs, every run has steps and is a file of its own, and the runs
// of each side share their configuration. Returns A's runs then B's.
std::vector<const ColumnarRun*> checked_runs(const std::vector<const ColumnarRun*>& a,
                                             const std::vector<const ColumnarRun*>& b) {
  if (a.empty() || b.empty()) {
    throw InputError(std::string("no run files for side ") + (a.empty() ? "A" : "B") +
                     "; compare needs at least one run per side");
  }
  std::vector<const ColumnarRun*> all = a;
  all.insert(all.end(), b.begin(), b.end());
  check_distinct(all);
  check_same_config(a, "A");
  check_same_config(b, "B");
  return all;
}

// Analyses `all` (A's runs then B's, `a_count` of them A's) into the two sides.
void analyze_sides(const std::vector<const ColumnarRun*>& all, size_t a_count,
                   const AnalysisOptions& options, detail::SideRuns& sa, detail::SideRuns& sb) {
  std::vector<RunAnalysis> analyses = analyze_all(all, options);
  const auto split = analyses.begin() + static_cast<long>(a_count);
  sa.files.assign(all.begin(), all.begin() + static_cast<long>(a_count));
  sb.files.assign(all.begin() + static_cast<long>(a_count), all.end());
  sa.analyses.assign(std::make_move_iterator(analyses.begin()), std::make_move_iterator(split));
  sb.analyses.assign(std::make_move_iterator(split), std::make_move_iterator(analyses.end()));
}

// The phases named by steps or phase_start events of any run: each must have steps in all. A
// phase that only events name (every run stopped at its switch, before its first step) has
// nothing to compare: it is left out, with a warning.
std::set<int> phases_named(const detail::SideRuns& sa, const detail::SideRuns& sb,
                           const std::vector<const ColumnarRun*>& all, detail::Warnings& warnings) {
  std::set<int> phases;
  for (const auto* side : {&sa, &sb}) {
    for (const RunAnalysis& ra : side->analyses) {
      for (const auto& p : ra.phases) phases.insert(p.phase);
    }
  }
  std::set<int> started;
  for (const ColumnarRun* run : all) {
    for (const auto& e : run->events) {
      if (e.kind == EventKind::kPhaseStart && !phases.count(e.phase)) started.insert(e.phase);
    }
  }
  for (int phase : started) {
    if (phases.empty() || phase < *phases.rbegin()) {
      phases.insert(phase);  // a phase between others: index_phase names the runs without it
      continue;
    }
    warnings.add(caveats::PhaseNotReached{phase});
  }
  return phases;
}

// Points each side's phase_index at `phase` in every run; throws naming a run without its steps.
void index_phase(int phase, detail::SideRuns& sa, detail::SideRuns& sb) {
  for (auto* side : {&sa, &sb}) {
    side->phase_index.clear();
    for (const RunAnalysis& ra : side->analyses) {
      const auto i = find_phase(ra, phase);
      if (!i) {
        // Name a run that has the phase, for the message.
        const RunAnalysis* other = nullptr;
        for (const auto* s : {&sa, &sb}) {
          for (const RunAnalysis& o : s->analyses) {
            if (!other && find_phase(o, phase)) other = &o;
          }
        }
        throw InputError(
            ra.path + ": no steps in phase " + std::to_string(phase) +
            (other ? " (" + other->path + " has " +
                         std::to_string(other->phases[*find_phase(*other, phase)].all.n) + ")"
                   : " (it has a phase_start event but no steps)") +
            "; cannot compare");
      }
      side->phase_index.push_back(*i);
    }
  }
}

// What weakens the comparison of the phases, gathered over all of them: one warning per cause,
// naming every file or phase it concerns.
struct WeakPhases {
  caveats::Drift drift;
  caveats::FewSteadySteps few;

  // Notes what weakens the comparison of `phase` (the sides indexed at it).
  void note(int phase, const detail::SideRuns& sa, const detail::SideRuns& sb,
            const CompareOptions& options) {
    for (const auto* side : {&sa, &sb}) {
      for (size_t i = 0; i < side->analyses.size(); ++i) {
        const RunAnalysis& r = side->analyses[i];
        const PhaseAnalysis& pa = r.phases[side->phase_index[i]];
        if (std::abs(pa.drift_ratio - 1.0) > options.drift_warning) {
          drift.runs.push_back({r.path, phase, pa.drift_ratio});
        }
      }
    }
    const int64_t fewest_a = phase_steady_min(sa);
    const int64_t fewest_b = phase_steady_min(sb);
    if (fewest_a < options.min_samples || fewest_b < options.min_samples) {
      few.phases.push_back({phase, fewest_a, fewest_b});
    }
  }

  void warn(detail::Warnings& warnings) const {
    if (!drift.runs.empty()) warnings.add(drift);
    if (!few.phases.empty()) warnings.add(few);
  }
};

// Compares every phase: timing, counts and their cost; then judges the phases together.
void compare_phases(detail::SideRuns& sa, detail::SideRuns& sb, const std::set<int>& phases,
                    const CompareOptions& options, Comparison& c) {
  WeakPhases weak;
  detail::Warnings warnings{c.caveats};
  for (int phase : phases) {
    index_phase(phase, sa, sb);
    PhaseComparison pc = detail::compare_phase_timing(phase, sa, sb, options, warnings);
    weak.note(phase, sa, sb, options);
    detail::compare_counts(phase, sa, sb, options, c.count_changes);
    if (auto cost = detail::counted_cost(phase, sa, sb, c.count_changes, options)) {
      c.counted_costs.push_back(std::move(*cost));
    }
    c.phases.push_back(std::move(pc));
  }
  weak.warn(warnings);
  detail::judge_phases(c.phases, c.counted_costs, options);
  for (const PhaseComparison& pc : c.phases) {
    if (pc.unit == ReplicationUnit::kEpochPairs || pc.unit == ReplicationUnit::kStepPairs) {
      c.unit = pc.unit;
    }
  }
}

// The umbrellas' parts counted around a switch of `run`, as their gates count them.
std::vector<SwitchCount> counted_at(const SwitchCost& s, const RunAnalysis& run) {
  std::vector<SwitchCount> out;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of == nullptr) continue;
    const int64_t n = detail::gate_value(f, s.around, run, s.to_phase);
    if (n > 0) out.push_back({f.key, n});
  }
  return out;
}

// The recompile tax of each switch that both first runs made.
std::vector<SwitchComparison> compare_switches(const RunAnalysis& a, const RunAnalysis& b) {
  std::vector<SwitchComparison> out;
  for (const SwitchCost& s_a : a.switches) {
    for (const SwitchCost& s_b : b.switches) {
      if (s_a.to_phase != s_b.to_phase) continue;
      SwitchComparison sc;
      sc.to_phase = s_a.to_phase;
      sc.tax_s_a = s_a.tax_s;
      sc.tax_s_b = s_b.tax_s;
      sc.extra_s_a = s_a.extra_s;
      sc.extra_s_b = s_b.extra_s;
      sc.compile_s_a = s_a.compile_s;
      sc.compile_s_b = s_b.compile_s;
      sc.recovery_steps_a = s_a.recovery_steps;
      sc.recovery_steps_b = s_b.recovery_steps;
      sc.tax_s_difference = s_b.tax_s - s_a.tax_s;
      sc.counted_a = counted_at(s_a, a);
      sc.counted_b = counted_at(s_b, b);
      out.push_back(sc);
    }
  }
  return out;
}

// The configuration differences of the first runs, and a warning listing those not expected.
void note_config_differences(const RunHeader& a, const RunHeader& b, const CompareOptions& options,
                             Comparison& c) {
  c.config_differences = detail::diff_headers(a, b);
  caveats::ConfigDiffers differs;  // the differences not expected
  for (const ConfigDifference& d : c.config_differences) {
    const auto& expected = options.expected_differences;
    if (std::find(expected.begin(), expected.end(), d.key) == expected.end()) {
      differs.differences.push_back(d);
    }
  }
  if (!differs.differences.empty()) detail::Warnings{c.caveats}.add(differs);
}

// The analyses' own warnings: the first runs' (held in c.a and c.b), then the other runs'.
void gather_run_warnings(const detail::SideRuns& sa, const detail::SideRuns& sb, Comparison& c) {
  detail::Warnings warnings{c.caveats};
  const int64_t every_a = sa.files[0]->header.turn_every_steps;
  const int64_t every_b = sb.files[0]->header.turn_every_steps;
  if (c.options.turns && every_a != every_b) warnings.add(caveats::TurnGrains{every_a, every_b});
  const auto add_run = [&warnings](const std::vector<std::string>& run_warnings) {
    for (const std::string& w : run_warnings) warnings.add(caveats::RunFileWarning{w});
  };
  add_run(c.a.warnings);
  add_run(c.b.warnings);
  for (const auto* side : {&sa, &sb}) {
    for (size_t i = 1; i < side->analyses.size(); ++i) add_run(side->analyses[i].warnings);
  }
}

Comparison compare_sets(const std::vector<const ColumnarRun*>& a,
                        const std::vector<const ColumnarRun*>& b, const CompareOptions& options) {
  const std::vector<const ColumnarRun*> all = checked_runs(a, b);
  detail::SideRuns sa, sb;
  analyze_sides(all, a.size(), options.analysis, sa, sb);

  Comparison c;
  c.options = options;
  for (const ColumnarRun* r : a) c.paths_a.push_back(r->path);
  for (const ColumnarRun* r : b) c.paths_b.push_back(r->path);
  c.unit = a.size() >= 2 || b.size() >= 2 ? ReplicationUnit::kRuns : ReplicationUnit::kBlocks;
  detail::Warnings warnings{c.caveats};
  compare_phases(sa, sb, phases_named(sa, sb, all, warnings), options, c);

  c.a = std::move(sa.analyses.front());
  c.b = std::move(sb.analyses.front());
  c.switches = compare_switches(c.a, c.b);
  c.compile_diff = diff_compile_findings(c.a.compile, c.b.compile);
  note_config_differences(a.front()->header, b.front()->header, options, c);
  gather_run_warnings(sa, sb, c);

  // A run that recorded no loss (0 at every step) has no training quality to compare.
  if (c.a.outcome.loss_recorded && c.b.outcome.loss_recorded) {
    c.convergence = compare_convergence(a, b);
  }
  judge_questions(c);
  summarize(c);
  return c;
}

}  // namespace

Comparison compare_run_sets(const std::vector<ColumnarRun>& a, const std::vector<ColumnarRun>& b,
                            const CompareOptions& options) {
  std::vector<const ColumnarRun*> pa, pb;
  for (const ColumnarRun& r : a) pa.push_back(&r);
  for (const ColumnarRun& r : b) pb.push_back(&r);
  return compare_sets(pa, pb, options);
}

Comparison compare_run_sets(const std::vector<RunFile>& a, const std::vector<RunFile>& b,
                            const CompareOptions& options) {
  std::vector<ColumnarRun> ca, cb;
  for (const RunFile& r : a) ca.push_back(to_columnar(r));
  for (const RunFile& r : b) cb.push_back(to_columnar(r));
  return compare_run_sets(ca, cb, options);
}

Comparison compare_runs(const ColumnarRun& a, const ColumnarRun& b, const CompareOptions& options) {
  return compare_sets({&a}, {&b}, options);
}

Comparison compare_runs(const RunFile& a, const RunFile& b, const CompareOptions& options) {
  const ColumnarRun ca = to_columnar(a);
  const ColumnarRun cb = to_columnar(b);
  return compare_sets({&ca}, {&cb}, options);
}

}  // namespace recompdiag
