#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>

#include "detail/glossary.h"
#include "job_fixtures.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/straggler.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/trace_writer.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;
using namespace recompdiag::reports;

namespace {

std::string fixture(const std::string& name) {
  return std::string(RECOMPDIAG_FIXTURES_DIR) + "/" + name;
}

struct Pair {
  RunFile a;
  RunFile b;
  Comparison c;
};

// The fixtures are single runs that did not take turns: the comparison needs a measured
// run-to-run spread to give a time verdict (3%, as a noise profile would say).
CompareOptions measured_noise() {
  CompareOptions o;
  o.run_noise = 0.03;
  return o;
}

Pair load(const std::string& a, const std::string& b) {
  Pair p{read_run_file(fixture(a)), read_run_file(fixture(b)), {}};
  p.c = compare_runs(p.a, p.b, measured_noise());
  return p;
}

// The mutable mode's run: no compile at the switch, the optimizer's state kept.
SyntheticRunOptions mutable_shape() {
  SyntheticRunOptions o;
  o.mode = "mutable";
  o.switch_compiles = 0;
  o.optimizer_reset_at_switch = false;
  o.warmup_at_switch = false;
  o.seed = 2;
  return o;
}

std::string render(ReportFormat format, const Comparison& c) {
  std::ostringstream out;
  make_renderer(format)->render(c, out);
  return out.str();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t pos = s.find(part); pos != std::string::npos; pos = s.find(part, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report formats parse by name") {
  CHECK(parse_report_format("md") == ReportFormat::kMarkdown);
  CHECK(parse_report_format("markdown") == ReportFormat::kMarkdown);
  CHECK(parse_report_format("html") == ReportFormat::kHtml);
  CHECK(parse_report_format("json") == ReportFormat::kJson);
  CHECK_THROWS_AS(parse_report_format("pdf"), InputError);
  CHECK(make_renderer(ReportFormat::kHtml)->format() == ReportFormat::kHtml);
}

TEST_CASE("the Markdown report leads with the verdict and tabulates each phase") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  const std::string md = render(ReportFormat::kMarkdown, p.c);
  CHECK(md.rfind("### recompdiag: **regression** · gate: fail (exit 1)\n", 0) == 0);
  // One line per question, each with its own verdict word.
  CHECK(contains(md, "| Question | Verdict | What it rests on |"));
  CHECK(contains(md, "| Step time (steady state, and all steps) | **regression** | phase 1 B/A "));
  CHECK(
      contains(md, "| Counted events (compiles, cache misses, syncs, copies) | **same counts** |"));
  CHECK(contains(md, "| Training quality (does not gate) | **"));
  CHECK(
      contains(md, "| Phase | A median ms | B median ms | B/A | 95% CI | p (Holm) | detectable |"));
  CHECK(contains(md, "| 1 | "));
  CHECK(contains(md, "| 2 | "));
  CHECK(contains(md, "| regression |"));
  CHECK(contains(md, "| Switch to phase | A recompile tax s (compile) | A steps to recover |"));
  CHECK(contains(md, "2 JIT compiles (reason: phase 2: loss weights baked into the graph)"));
  CHECK(contains(md, "**Final loss per head**"));
  // Short enough for a pull-request comment (the story's lines on top included).
  CHECK(count(md, "\n") < 52);
  // The story comes first: what each side paid at the switch, then the steady state.
  CHECK(md.find("- Switch to phase 2: A (recompile) paid") < md.find("| Phase |"));
  CHECK(contains(md, "- Steady state: phase 1 "));
}

TEST_CASE("the Markdown report names a run by its file, and a job by its label and first file") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  p.c.a.path = "/runs/old/recompile.jsonl";
  p.c.b.path = "job 65205fc6 (2 ranks: /runs/new/mutable.rank0.jsonl ...)";
  const std::string md = render(ReportFormat::kMarkdown, p.c);
  CHECK(contains(md, "A (baseline) = `recompile.jsonl` (recompile), B = `job 65205fc6 (2 ranks: "
                     "mutable.rank0.jsonl ...)` (recompile)"));
}

TEST_CASE("the story: the switches apart, then the counted costs and the steady state") {
  const std::vector<std::string> fixtures = {"compare_baseline.jsonl", "compare_slower.jsonl",
                                             "compare_faster.jsonl", "compare_rerun.jsonl"};
  size_t switches = 0;
  size_t costs = 0;
  for (const std::string& a : fixtures) {
    for (const std::string& b : fixtures) {
      if (a == b) continue;
      CAPTURE(a);
      CAPTURE(b);
      const Pair p = load(a, b);
      const Story s = story(p.c);
      for (const std::string& line : s.switches) {
        CHECK(line.rfind("Switch to phase 2: A (", 0) == 0);
        CHECK(contains(line, " paid "));
      }
      for (const std::string& line : s.counted_costs) {
        CHECK(line.rfind("Counted cost, phase ", 0) == 0);
      }
      CHECK(s.steady.rfind("Steady state: phase 1 ", 0) == 0);
      switches += s.switches.size();
      costs += s.counted_costs.size();
    }
  }
  CHECK(switches == 12);  // every pair of runs switched to phase 2
  CHECK(costs == 0);      // the fixtures count alike

  // Several runs a side: the first runs' switches.
  const auto run = [](const char* name) { return read_run_file(fixture(name)); };
  const Comparison sets =
      compare_run_sets({run("compare_baseline.jsonl"), run("compare_rerun.jsonl")},
                       {run("compare_slower.jsonl"), run("compare_faster.jsonl")});
  REQUIRE(story(sets).switches.size() == 1);
  CHECK(story(sets).switches[0].rfind("Switch to phase 2 (first runs): A (", 0) == 0);

  // B compiles nothing at the switch and keeps its optimizer's state: the compiles' counted cost.
  test::TempDir dir;
  write_synthetic_run(dir.file("a.jsonl"), SyntheticRunOptions{});
  write_synthetic_run(dir.file("b.jsonl"), mutable_shape());
  const Comparison c = compare_runs(read_run_file(dir.file("a.jsonl")),
                                    read_run_file(dir.file("b.jsonl")), measured_noise());
  const Story s = story(c);
  REQUIRE(s.switches.size() == 1);
  CHECK(contains(s.switches[0], "A (recompile) paid "));
  // The umbrellas' parts in the table's order, the reason with the first compile.
  CHECK(contains(s.switches[0], ": 2 JIT compiles (phase 2: loss weights baked into the graph), "
                                "2 JIT plan builds, 12 first-seen op signatures and Adam state "
                                "reset; B (mutable) paid 0 s: 12 first-seen op signatures."));
  REQUIRE(s.counted_costs.size() == 1);
  CHECK(contains(s.counted_costs[0], "Counted cost, phase 2: B's 2 fewer JIT compiles"));
}

// Which of phase_reason()'s sentences a comparison's phases were given, by their first words.
struct ReasonsSeen {
  std::map<std::string, int> by_start;
  std::map<std::string, int> signals;  // by kind
  std::map<std::string, int> quality;  // by verdict, "tested" apart
  std::map<size_t, int> caveats;       // by the Caveat's alternative
  int improved = 0;                    // "better in every pair"
  void add(const std::string& reason) {
    for (const char* start :
         {"slower beyond", "faster beyond", "what the counted events cost",
          "what the counted events saved", "equivalent within", "one run per side",
          "the runs' own step times jump", "cannot be told"}) {
      if (reason.rfind(start, 0) == 0) ++by_start[start];
    }
  }
};

// The reports word every fact of an analysis and a comparison; which kinds of sentence they gave
// is tallied, so that the fixtures are known to reach each.
void check_quality(const ConvergenceComparison& q, ReasonsSeen& seen) {
  const std::string words = convergence_summary(q);
  CHECK(words.rfind("training quality: ", 0) == 0);
  ++seen.quality[std::string(to_string(q.verdict)) + (q.tested ? ", tested" : "")];
  seen.improved += words.find("better in every pair") != std::string::npos;
}

void check_words(const RunAnalysis& r, ReasonsSeen& seen) {
  for (const SlowStretch& s : r.slow_stretches) {
    CHECK(stretch_sentence(s).rfind("step", 0) == 0);
    for (const Signal& signal : s.signals) {
      CHECK_FALSE(signal_words(signal).empty());
      ++seen.signals[signal.kind];
      if (signal.kind == "context") ++seen.signals[to_string(signal.event)];
    }
  }
}

void check_words(const Comparison& c, ReasonsSeen& seen) {
  check_words(c.a, seen);
  check_words(c.b, seen);
  for (const PhaseAnalysis& pb : c.b.phases) {
    for (const PhaseAnalysis& pa : c.a.phases) {
      if (pa.phase != pb.phase) continue;
      for (const Signal& signal : rank_phase_signals(pb, &pa, c.b.header.optimizer)) {
        CHECK_FALSE(signal_words(signal).empty());
        ++seen.signals[signal.kind];
      }
    }
  }
  for (const PhaseComparison& p : c.phases) seen.add(phase_reason(p, c));
  for (const CountChange& cc : c.count_changes) {
    CHECK(contains(count_change_line(cc), count_change(cc)));
  }
  for (const CountedCost& cost : c.counted_costs) {
    if (!cost.counts.empty()) CHECK(contains(counted_cost_line(cost, c), cost_causes(cost, c)));
  }
  check_quality(c.convergence, seen);
  CHECK(warnings(c).size() == c.caveats.size());
  for (const Caveat& caveat : c.caveats) ++seen.caveats[caveat.index()];
  // The summary is the timing sentence, then the training quality where B's training changed.
  CHECK(summary(c).rfind(time_summary(c), 0) == 0);
}

TEST_CASE("the words: each sentence from the facts, as 0.6's fields said it") {
  ReasonsSeen seen;
  const std::vector<std::string> fixtures = {"compare_baseline.jsonl", "compare_slower.jsonl",
                                             "compare_faster.jsonl", "compare_rerun.jsonl"};
  for (const std::string& a : fixtures) {
    for (const std::string& b : fixtures) {
      if (a == b) continue;
      CAPTURE(a);
      CAPTURE(b);
      check_words(load(a, b).c, seen);
      // No measured spread: no time verdict, and the advice that would give one.
      check_words(compare_runs(read_run_file(fixture(a)), read_run_file(fixture(b))), seen);
    }
  }
  const auto run = [](const char* name) { return read_run_file(fixture(name)); };
  CompareOptions paired;
  paired.paired = true;
  for (const CompareOptions& o : {CompareOptions{}, paired}) {
    check_words(compare_run_sets({run("compare_baseline.jsonl"), run("compare_rerun.jsonl")},
                                 {run("compare_slower.jsonl"), run("compare_faster.jsonl")}, o),
                seen);
  }

  // Synthetic pairs for the sentences the fixtures never need: counted costs both ways, a
  // --fail-on count, a cost in the warm-up steps alone, steady times on levels the given spread
  // cannot explain.
  test::TempDir dir;
  SyntheticRunOptions recompile;
  SyntheticRunOptions mutable_run = mutable_shape();
  SyntheticRunOptions slow_warmup;
  slow_warmup.warmup_factor = 400.0;
  slow_warmup.warmup_steps = 8;
  slow_warmup.seed = 3;
  SyntheticRunOptions quiet;
  quiet.noise = 0.001;
  quiet.seed = 4;
  SyntheticRunOptions quiet_slower = quiet;
  quiet_slower.phase_scale = {1.0, 1.02};
  quiet_slower.seed = 5;
  SyntheticRunOptions noisy;  // block medians 10% and more apart: beyond a 3% spread's reach
  noisy.noise = 0.4;
  noisy.seed = 6;
  SyntheticRunOptions noisy_again = noisy;
  noisy_again.seed = 7;
  const std::vector<std::pair<const char*, SyntheticRunOptions>> shapes = {
      {"recompile", recompile},       {"mutable", mutable_run},
      {"slow_warmup", slow_warmup},   {"quiet", quiet},
      {"quiet_slower", quiet_slower}, {"noisy", noisy},
      {"noisy_again", noisy_again}};
  for (const auto& [name, o] : shapes)
    write_synthetic_run(dir.file(std::string(name) + ".jsonl"), o);
  const auto synthetic = [&](const std::string& name) {
    return read_run_file(dir.file(name + ".jsonl"));
  };
  CompareOptions fail_on = measured_noise();
  fail_on.fail_on = {"compiles"};
  CompareOptions tiny_spread;
  tiny_spread.run_noise = 0.0001;
  const std::vector<std::tuple<std::string, std::string, CompareOptions>> pairs = {
      {"recompile", "mutable", measured_noise()},
      {"mutable", "recompile", measured_noise()},
      {"mutable", "recompile", fail_on},
      {"recompile", "slow_warmup", measured_noise()},
      {"slow_warmup", "recompile", measured_noise()},
      {"quiet", "quiet_slower", tiny_spread},
      {"quiet", "quiet_slower", measured_noise()},
      {"noisy", "noisy_again", measured_noise()}};
  for (const auto& pair : pairs) {
    // Named, not bound: a lambda (CAPTURE's) cannot capture a structured binding in C++17.
    const std::string& a = std::get<0>(pair);
    const std::string& b = std::get<1>(pair);
    CAPTURE(a);
    CAPTURE(b);
    check_words(compare_runs(synthetic(a), synthetic(b), std::get<2>(pair)), seen);
  }
  // The lr and the loss weights change at the switch: context signals of their own.
  RunFile changed = synthetic("recompile");
  for (const EventKind kind : {EventKind::kLrChange, EventKind::kLossWeightsChange}) {
    changed.events.push_back({kind, 100, 2, "phase 2", {}});
  }
  check_words(compare_runs(synthetic("mutable"), changed, measured_noise()), seen);
  // B syncs on every step of phase 2: a per-step cost, which the counted cost lists, not prices.
  RunFile syncing = synthetic("mutable");
  syncing.path += ".syncing";
  for (StepRecord& step : syncing.steps) {
    if (step.phase == 2 && step.dispatch) step.dispatch->syncs += 1;
  }
  const Comparison per_step = compare_runs(synthetic("mutable"), syncing, measured_noise());
  REQUIRE_FALSE(per_step.counted_costs.empty());
  CHECK(per_step.counted_costs[0].counts.empty());
  check_words(per_step, seen);
  // Phase 0 is a phase: B slower in it decides the verdict (the phases of a slower pair, shifted).
  const auto shifted = [&](const std::string& name) {
    RunFile r = synthetic(name);
    for (StepRecord& step : r.steps) --step.phase;
    for (EventRecord& e : r.events) {
      --e.phase;
      if (e.kind == EventKind::kPhaseStart) e.detail["phase"] = e.phase;
    }
    return r;
  };
  check_words(compare_runs(shifted("quiet_slower"), shifted("quiet"), tiny_spread), seen);
  SyntheticRunOptions quiet_first_slower = quiet;
  quiet_first_slower.phase_scale = {1.3, 1.0};
  quiet_first_slower.seed = 8;
  write_synthetic_run(dir.file("quiet_first_slower.jsonl"), quiet_first_slower);
  const Comparison first =
      compare_runs(shifted("quiet"), shifted("quiet_first_slower"), measured_noise());
  CHECK(first.verdict == Verdict::kRegression);
  REQUIRE(first.deciding_phase == std::optional<int>(0));
  CHECK(summary(first).rfind("regression: phase 0 regressed ", 0) == 0);
  check_words(first, seen);
  // The caveats the pairs above do not have: a run that never finished, a phase no run reached,
  // steady times that drift or stay alike for long, few steady steps, turns at two grains.
  SyntheticRunOptions unfinished = quiet;
  unfinished.finished = false;
  unfinished.seed = 9;
  SyntheticRunOptions short_run = quiet;
  short_run.phase_steps = {15, 15};
  short_run.seed = 10;
  SyntheticRunOptions short_again = short_run;
  short_again.seed = 11;
  for (const auto& [name, o] : std::vector<std::pair<const char*, SyntheticRunOptions>>{
           {"unfinished", unfinished}, {"short", short_run}, {"short_again", short_again}}) {
    write_synthetic_run(dir.file(std::string(name) + ".jsonl"), o);
  }
  check_words(compare_runs(synthetic("quiet"), synthetic("unfinished"), measured_noise()), seen);
  check_words(compare_runs(synthetic("short"), synthetic("short_again"), measured_noise()), seen);
  const auto stopped_at_switch = [&](const std::string& name) {
    RunFile r = synthetic(name);
    r.steps.erase(std::remove_if(r.steps.begin(), r.steps.end(),
                                 [](const StepRecord& step) { return step.phase == 2; }),
                  r.steps.end());
    return r;
  };
  check_words(
      compare_runs(stopped_at_switch("quiet"), stopped_at_switch("quiet_slower"), measured_noise()),
      seen);
  RunFile wavy = synthetic("quiet");  // one slow wave over phase 1, and phase 2 slower halfway
  wavy.path += ".wavy";
  for (size_t i = 0; i < wavy.steps.size(); ++i) {
    StepRecord& step = wavy.steps[i];
    if (step.phase == 1) step.wall_ms *= 1.0 + 0.3 * std::sin(static_cast<double>(i) / 16.0);
    if (step.phase == 2 && step.step >= 150) step.wall_ms *= 1.5;
  }
  check_words(compare_runs(synthetic("quiet"), wavy, measured_noise()), seen);
  CompareOptions turns = measured_noise();
  turns.turns = true;
  RunFile every_step = synthetic("quiet");
  every_step.header.turn_every_steps = 1;
  check_words(compare_runs(every_step, synthetic("quiet_slower"), turns), seen);
  // A step-paired phase dominated by the same first compile on both sides: once unmeasured, once
  // against a calibrated spread that it is beyond.
  RunFile compiled_a = synthetic("quiet");
  compiled_a.header.turn_every_steps = 1;
  compiled_a.steps.front().wall_ms = 800.0;
  compiled_a.steps.front().compiled = CompiledStats{};
  compiled_a.steps.front().compiled->compiles = 1;
  RunFile compiled_b = compiled_a;
  compiled_b.path += ".b";
  compiled_b.steps.front().wall_ms = 1600.0;
  check_words(compare_runs(compiled_a, compiled_b, turns), seen);
  CompareOptions calibrated = turns;
  calibrated.compile_spread = 0.05;
  const Comparison spread = compare_runs(compiled_a, compiled_b, calibrated);
  CHECK(spread.phases.front().compile_time_decides);
  check_words(spread, seen);
  for (size_t kind = 0; kind < std::variant_size_v<Caveat>; ++kind) {
    CAPTURE(kind);
    CHECK(seen.caveats[kind] > 0);
  }

  // Every sentence was checked at least once.
  for (const char* start :
       {"slower beyond", "faster beyond", "what the counted events cost",
        "what the counted events saved", "equivalent within", "one run per side",
        "the runs' own step times jump", "cannot be told"}) {
    CAPTURE(std::string(start));
    CHECK(seen.by_start[start] > 0);
  }
  // Training quality: B's losses scaled, over one pair and over three seeded pairs.
  const auto scaled = [&](const std::string& name, double by) {
    RunFile r = synthetic(name);
    for (StepRecord& step : r.steps) {
      step.loss *= by;
      for (double& h : step.head_losses) h *= by;
    }
    return r;
  };
  for (const double by : {1.3, 0.7}) {
    check_quality(compare_convergence({synthetic("recompile")}, {scaled("recompile", by)}), seen);
    check_quality(
        compare_convergence({synthetic("recompile"), synthetic("slow_warmup"), synthetic("quiet")},
                            {scaled("recompile", by), scaled("slow_warmup", by * 1.02),
                             scaled("quiet", by * 0.98)}),
        seen);
  }
  for (const char* verdict :
       {"no change", "no change, tested", "regression, tested", "untested difference"}) {
    CAPTURE(std::string(verdict));
    CHECK(seen.quality[verdict] > 0);
  }
  CHECK(seen.improved > 0);
  for (const char* kind : {"jit_compiles", "jit_plan_builds", "optimizer_reset", "context",
                           "lr_change", "loss_weights_change"}) {
    CAPTURE(std::string(kind));
    CHECK(seen.signals[kind] > 0);
  }

  // Every signal of kProbeCounts, each with a count of its own (and 1 for one event, the words'
  // singular): a phase that has them all against one that has none.
  for (const int64_t n : {1, 3}) {
    PhaseAnalysis none;
    PhaseAnalysis all;
    all.counts.steps = 40;
    size_t kinds = 0;
    for (const ProbeCountField& f : kProbeCounts) {
      if (f.signal.kind == nullptr) continue;
      all.counts.*f.value = n + static_cast<int64_t>(kinds++);
    }
    all.counts.copy_bytes = 4'200'000;
    all.counts.lr_requested = 0.01;
    all.counts.lr_effective = 0.001;
    all.counts.alerts += 2;  // besides the slow_step and memory_growth alerts
    all.counts.resident_first_bytes = 1'000'000;
    all.counts.resident_last_bytes = 9'000'000;
    const std::vector<Signal> signals = rank_phase_signals(all, &none, "Adam");
    CHECK(signals.size() + 1 == kinds);  // every kind but `alerts`, which ranking leaves out
    for (const Signal& signal : signals) {
      CAPTURE(signal.kind);
      CHECK_FALSE(signal_words(signal).empty());
    }
  }
}

TEST_CASE("the words of a job's stragglers, each cause from its facts") {
  // Rank 1 holds the others up at steps 40-41 for each cause in turn, most specific first.
  const auto without_compile = [] {
    std::vector<RunFile> ranks = test::job_with_straggler(1);
    ranks[1].events.pop_back();
    return ranks;
  };
  std::vector<std::vector<RunFile>> jobs = {test::job_with_straggler(1), without_compile()};
  jobs.push_back(without_compile());
  jobs.back()[1].steps[40].jit->plan_builds = 0;
  jobs.back()[1].steps[40].jit->profiling_runs = 2;
  jobs.push_back(without_compile());
  jobs.back()[1].steps[40].jit->plan_builds = 0;
  jobs.back()[1].events.push_back({EventKind::kOptimizerRebuild, 40, 1, "phase 2: new Adam", {}});
  jobs.push_back(without_compile());
  jobs.back()[1].steps[40].jit->plan_builds = 0;
  jobs.back()[1].steps[41].alerts = {"host_sync"};
  jobs.push_back(without_compile());
  jobs.back()[1].steps[40].jit->plan_builds = 0;
  jobs.push_back(test::job_with_straggler(2));  // every rank compiled; rank 2 arrived last
  for (RunFile& r : jobs.back()) {
    if (r.header.rank != 2) r.events.push_back({EventKind::kCompile, 40, 1, "recompile", {}});
  }
  jobs.push_back(test::job_with_straggler(3));  // a compile time the event got wrong
  jobs.back()[3].events.back().detail["compile_ms"] = -2.0;
  jobs.push_back(test::job_with_straggler(3));  // a compile event that does not time itself
  jobs.back()[3].events.back().detail = nlohmann::json::object();
  jobs.emplace_back();  // ranks slow alike: no straggler
  for (int r = 0; r < 2; ++r) {
    jobs.back().push_back(test::rank_file(r, 2, "j"));
    jobs.back().back().steps[50].wall_ms = 60.0;
  }
  std::map<StragglerCause, int> seen;
  bool every_rank = false;
  for (const std::vector<RunFile>& ranks : jobs) {
    const JobAnalysis j = analyze_job(ranks, analyze_run(job_run(ranks)));
    for (const StragglerFinding& f : j.stragglers) {
      const std::string sentence = straggler_sentence(f);
      CAPTURE(sentence);
      if (f.cause_kind == StragglerCause::kNone) {
        CHECK(contains(sentence, "no straggler"));
      } else {
        CHECK(contains(sentence, "rank " + std::to_string(f.straggler) + " " + straggler_cause(f)));
      }
      ++seen[f.cause_kind];
      every_rank |= f.every_rank_compiled;
    }
  }
  for (const StragglerCause kind :
       {StragglerCause::kNone, StragglerCause::kCompiled, StragglerCause::kPlanBuilds,
        StragglerCause::kProfilingRuns, StragglerCause::kOptimizerRebuild, StragglerCause::kAlert,
        StragglerCause::kComputedLonger}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(seen[kind] > 0);
  }
  CHECK(every_rank);
}

TEST_CASE("every renderer prints the configured confidence level, never a fixed 95%") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  CompareOptions o = measured_noise();
  o.bootstrap.confidence = 0.90;
  const Comparison c = compare_runs(p.a, p.b, o);
  const std::string md = render(ReportFormat::kMarkdown, c);
  const std::string html = render(ReportFormat::kHtml, c);
  CHECK(contains(md, "| 90% CI |"));
  CHECK(contains(html, "<th>90% CI</th>"));
  CHECK(contains(summary(c), "(90% CI "));
  for (const std::string* text : {&md, &html}) CHECK_FALSE(contains(*text, "95%"));
  const nlohmann::json j = nlohmann::json::parse(render(ReportFormat::kJson, c));
  CHECK(j["phases"][1]["ratio"]["confidence"] == 0.90);
}

TEST_CASE("the JSON report carries every figure, the schema, the tool version and both headers") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  const nlohmann::json j = nlohmann::json::parse(render(ReportFormat::kJson, p.c));
  CHECK(j["schema"] == kReportSchemaVersion);
  CHECK(j["tool_version"] == kToolVersion);
  CHECK(j["build"] == kBuildInfo);
  CHECK(j["verdict"] == "regression");
  CHECK(j["options"]["threshold"] == 0.05);
  REQUIRE(j["phases"].size() == 2);
  const auto& p2 = j["phases"][1];
  CHECK(p2["verdict"] == "regression");
  CHECK(p2["ratio"]["value"].get<double>() == doctest::Approx(p.c.phases[1].ratio.ratio));
  CHECK(p2["ratio"]["ci_low"].get<double>() == doctest::Approx(p.c.phases[1].ratio.low));
  CHECK(p2["mann_whitney"]["p"].get<double>() == doctest::Approx(p.c.phases[1].mann_whitney.p));
  CHECK(p2["test"]["unit"] == "blocks");
  CHECK(p2["test"]["p_holm"].get<double>() == doctest::Approx(p.c.phases[1].p_holm));
  CHECK(p2["test"]["mde"].get<double>() == doctest::Approx(p.c.phases[1].test.mde));
  CHECK(j["unit"] == "blocks");
  CHECK(j["runs_a"].size() == 1);
  CHECK(j["a"]["header"]["mode"] == "recompile");
  CHECK(j["a"]["header"]["seed"] == 1);
  CHECK(j["b"]["header"]["seed"] == 3);
  CHECK(j["a"]["header"]["config"]["phase_steps"] == nlohmann::json({100, 100}));
  CHECK(j["a"]["phases"][1]["warmup_steps"] == p.c.a.phases[1].warmup_steps);
  CHECK(j["b"]["phases"][1]["drift_ratio"].get<double>() ==
        doctest::Approx(p.c.b.phases[1].drift_ratio));
  CHECK(j["a"]["phases"][1]["steady"]["p95_ms"].get<double>() ==
        doctest::Approx(p.c.a.phases[1].steady.p95_ms));
  CHECK(j["a"]["switches"][0]["extra_s"].get<double>() ==
        doctest::Approx(p.c.a.switches[0].extra_s));
  CHECK(j["a"]["switches"][0]["tax_s"].get<double>() == doctest::Approx(p.c.a.switches[0].tax_s));
  CHECK(j["switches"][0]["tax_s_b"].get<double>() == doctest::Approx(p.c.switches[0].tax_s_b));
  CHECK(j["a"]["switches"][0]["around"]["jit_compiles"] == 2);
  CHECK(j["a"]["switches"][0]["loss_jump"]["head_jump"].size() == 2);
  CHECK(j["a"]["outcome"]["final_head_losses"].size() == 2);
  CHECK(j["switches"][0]["to_phase"] == 2);
  CHECK(j["config_differences"][0]["key"] == "seed");
  CHECK_FALSE(j["a"]["slow_stretches"].empty());
}

TEST_CASE("the HTML report is one self-contained page with the verdict first and three charts") {
  Pair p = load("compare_baseline.jsonl", "compare_faster.jsonl");
  const std::string html = render(ReportFormat::kHtml, p.c);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(html, "</html>"));
  const size_t verdict = html.find("<header class=\"verdict improvement\"><h1>Improvement</h1>");
  REQUIRE(verdict != std::string::npos);
  // The first screen: the verdict and the gate, the questions, then the step-time chart, before
  // every table of figures.
  const size_t questions = html.find("<table class=\"questions\">");
  const size_t chart = html.find("step time (ms, log)");
  CHECK(verdict < html.find("gate: pass (exit 0)"));
  CHECK(verdict < questions);
  CHECK(questions < chart);
  CHECK(chart < html.find("<h2>Step time per phase"));
  CHECK(verdict < html.find("<svg"));
  CHECK(count(html, "<svg") == 3);
  CHECK(count(html, "<svg") == count(html, "</svg>"));
  CHECK(contains(html, "step time (ms, log)"));
  CHECK(contains(html, "phase 2 starts (step 100)"));
  // No scripts and nothing fetched from a network.
  CHECK_FALSE(contains(html, "<script"));
  CHECK_FALSE(contains(html, "src="));
  CHECK_FALSE(contains(html, "<link"));
  CHECK_FALSE(contains(html, "url("));
}

TEST_CASE("HTML escapes what comes from run files") {
  Pair p = load("compare_baseline.jsonl", "compare_rerun.jsonl");
  // A compile reason is the run file's text.
  Signal compile;
  compile.kind = "jit_compiles";
  compile.count = 1;
  compile.reasons = {"<script>alert(1)</script>"};
  p.c.a.slow_stretches.at(0).signals = {compile};
  const std::string html = render(ReportFormat::kHtml, p.c);
  CHECK_FALSE(contains(html, "<script>"));
  CHECK(contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
}

TEST_CASE("the Chrome trace has steps, phases, compiles and alerts for both runs") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  p.a.steps[10].alerts = {"host_sync"};
  p.c = compare_runs(p.a, p.b, measured_noise());
  std::ostringstream out;
  write_chrome_trace(p.a, p.b, p.c, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["otherData"]["verdict"] == "regression");
  int steps = 0;
  int phases = 0;
  int compiles = 0;
  int alerts = 0;
  int switches = 0;
  int stretches = 0;
  double last_end_a = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string name = e["name"].get<std::string>();
    if (e["ph"] == "X" && e["tid"] == 1) {
      ++steps;
      if (e["pid"] == 1) {
        CHECK(e["ts"].get<double>() == doctest::Approx(last_end_a).epsilon(1e-6));
        last_end_a = e["ts"].get<double>() + e["dur"].get<double>();
      }
    }
    if (e["ph"] == "X" && name.rfind("phase ", 0) == 0) ++phases;
    if (e["ph"] == "X" && name.rfind("slow: ", 0) == 0) ++stretches;
    if (e["ph"] == "i" && e["cat"] == "compile") ++compiles;
    if (e["ph"] == "i" && e["cat"] == "alert") ++alerts;
    if (e["ph"] == "i" && e["cat"] == "phase") ++switches;
  }
  CHECK(steps == 400);
  CHECK(phases == 4);
  CHECK(compiles == 6);  // 1 + 2 per run
  CHECK(alerts == 1);
  CHECK(switches == 2);
  CHECK(stretches >= 4);
  CHECK(last_end_a / 1000.0 == doctest::Approx(p.c.a.total_wall_s * 1000.0).epsilon(1e-6));
}

TEST_CASE("report files are written atomically") {
  test::TempDir dir;
  const std::string path = dir.file("report.md");
  write_file_atomically(path, std::string("first"));
  CHECK(test::read_text(path) == "first");
  // A writer that fails leaves the previous file and no temporary behind.
  CHECK_THROWS_AS(write_file_atomically(path,
                                        [](std::ostream& out) {
                                          out << "half";
                                          throw std::runtime_error("disk gone");
                                        }),
                  std::runtime_error);
  CHECK(test::read_text(path) == "first");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
  const std::string bad = dir.file("no/such/dir/report.md");
  try {
    write_file_atomically(bad, std::string("x"));
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), bad));
  }
}

TEST_CASE("check_writable refuses what write_file_atomically would, and writes nothing") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  check_writable(dir.file("new.json"));  // a new file in a writable directory
  const std::string existing = dir.file("old.json");
  write_file_atomically(existing, std::string("kept"));
  check_writable(existing);
  check_writable("/dev/null");  // written in place
  CHECK(test::read_text(existing) == "kept");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);  // no probe file left, the new one not created
  CHECK_THROWS_AS(check_writable(dir.file("no/such/dir/x.json")), InputError);
  CHECK_THROWS_WITH_AS(check_writable(dir.path().string()), doctest::Contains("is a directory"),
                       InputError);
}

TEST_CASE("report files: devices are written in place, links kept, directories refused") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  // Renaming over /dev/null would replace the device with a regular file (we may run as root).
  write_file_atomically("/dev/null", std::string("discarded"));
  CHECK(fs::is_character_file("/dev/null"));
  if (fs::exists("/dev/full")) {
    // A device that is full: the environment failed, not the input (exit 1).
    CHECK_THROWS_AS(write_file_atomically("/dev/full", std::string(1 << 16, 'x')), IoError);
    CHECK(fs::is_character_file("/dev/full"));
  }
  const std::string real = dir.file("real.md");
  const std::string link = dir.file("link.md");
  write_file_atomically(real, std::string("old"));
  fs::create_symlink(real, link);
  write_file_atomically(link, std::string("new"));
  CHECK(fs::is_symlink(link));
  CHECK(test::read_text(real) == "new");
  CHECK_THROWS_WITH_AS(write_file_atomically(dir.path().string(), std::string("x")),
                       doctest::Contains("is a directory"), InputError);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 2);  // no temporaries left
}

TEST_CASE("write_ab_reports writes the three reports and returns the Markdown") {
  test::TempDir dir;
  const std::string out_dir = dir.file("ab");
  RunFile recompile = read_run_file(fixture("compare_baseline.jsonl"));
  RunFile mutable_run = read_run_file(fixture("compare_faster.jsonl"));
  const std::string md = write_ab_reports(recompile, mutable_run, measured_noise(), out_dir);
  CHECK(test::read_text(out_dir + "/report.md") == md);
  CHECK(contains(md, "**improvement**"));
  CHECK(test::read_text(out_dir + "/report.html").rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(nlohmann::json::parse(test::read_text(out_dir + "/report.json"))["verdict"] ==
        "improvement");
}

TEST_CASE("every term the report links is defined in it, and docs/glossary.md says the same") {
  Pair p = load("compare_baseline.jsonl", "compare_slower.jsonl");
  const std::string html = render(ReportFormat::kHtml, p.c);
  const std::string glossary =
      test::read_text(std::string(RECOMPDIAG_SOURCE_DIR) + "/docs/glossary.md");
  for (const reports::detail::Term& t : reports::detail::kTerms) {
    CAPTURE(t.name);
    CHECK(contains(html, std::string("<dt id=\"") + t.anchor + "\">"));
    CHECK(contains(glossary, std::string("**") + t.name + "**: " + t.definition));
  }
  // Every link to a term lands on one.
  for (size_t at = html.find("href=\"#"); at != std::string::npos;
       at = html.find("href=\"#", at + 1)) {
    const std::string anchor = html.substr(at + 7, html.find('"', at + 7) - at - 7);
    CAPTURE(anchor);
    CHECK(contains(html, "id=\"" + anchor + "\""));
  }
}

TEST_CASE("the compile ledger is drawn where the runs have it, in HTML and Markdown alike") {
  Pair p{read_run_file(fixture("compare_baseline.jsonl")),
         read_run_file(fixture("compare_slower.jsonl")), {}};
  // Without the ledger (the fixtures have no compiled section) there is no table.
  p.c = compare_runs(p.a, p.b, measured_noise());
  CHECK_FALSE(contains(render(ReportFormat::kHtml, p.c), "torch.compile ledger"));
  CHECK_FALSE(contains(render(ReportFormat::kMarkdown, p.c), "torch.compile ledger"));
  // B's cache was cold at its first step: 2 FX-graph misses and 1500 ms of kernel compiles.
  for (RunFile* run : {&p.a, &p.b}) {
    for (StepRecord& s : run->steps) {
      s.compiled = CompiledStats{};
      s.compiled->ledger = true;
      s.compiled->recompile_limit = 8;
    }
  }
  p.a.steps[0].compiled->fx_cache_hits = 2;
  p.b.steps[0].compiled->fx_cache_misses = 2;
  p.b.steps[0].compiled->kernel_compile_ms = 1500.0;
  p.c = compare_runs(p.a, p.b, measured_noise());
  const std::string html = render(ReportFormat::kHtml, p.c);
  const std::string md = render(ReportFormat::kMarkdown, p.c);
  REQUIRE(contains(html, "<h2>torch.compile ledger</h2>"));
  // Columns: A phase 1, A phase 2, B phase 1, B phase 2.
  CHECK(contains(html, "<td class=\"l\" title=\"Inductor FX-graph cache misses: the graph was "
                       "compiled\">fx_cache_misses</td><td>0</td><td>0</td><td>2</td><td>0</td>"));
  CHECK(contains(html, ">kernel_compile_ms</td><td>0</td><td>0</td><td>1500</td><td>0</td>"));
  // A level is its largest value, not a sum over the steps.
  CHECK(contains(html, ">recompile_limit</td><td>8</td><td>8</td><td>8</td><td>8</td>"));
  REQUIRE(contains(md, "**torch.compile ledger**"));
  CHECK(contains(md, "| fx_cache_misses | 0 | 0 | 2 | 0 |"));
  CHECK(contains(md, "| recompile_limit | 8 | 8 | 8 | 8 |"));
  CHECK_FALSE(contains(md, "| ledger |"));  // the flag is not a row
}
