// torch.compile's findings in words, the single-run report in its three formats, and the first
// screen of a comparison naming each cause with its frame, guard and fix.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "detail/format.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/run_report.h"
#include "test_util.h"

using namespace recompdiag;
using namespace recompdiag::reports;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `n` observed steps of 10 ms with a loss.
RunFile compiled_run(int64_t n, double loss = 1.0) {
  RunFile run;
  run.path = "/runs/job.jsonl";
  run.header.mode = "python";
  for (int64_t i = 0; i < n; ++i) {
    StepRecord s;
    s.step = i;
    s.step_in_phase = i;
    s.wall_ms = 10.0;
    s.loss = loss;
    s.compiled = CompiledStats{};
    s.compiled->lookups = 1;
    s.compiled->region_runs = 1;
    run.steps.push_back(s);
  }
  return run;
}

void recompile(RunFile& run, int64_t step, const std::string& function, const std::string& guard,
               int64_t frame_compiles, double compile_ms) {
  run.steps[static_cast<size_t>(step)].compiled->compile_ms = compile_ms;
  run.steps[static_cast<size_t>(step)].wall_ms += compile_ms;
  run.events.push_back(
      {EventKind::kCompile,
       step,
       1,
       "torch.compile recompiles " + function,
       {{"compiler", "dynamo"},
        {"function", function},
        {"file", "/venv/lib/python3.11/site-packages/transformers/utils/generic.py"},
        {"line", 1075},
        {"guard_failures", {guard}},
        {"frame_compiles", frame_compiles},
        {"recompile_limit", 8}}});
}

// A Trainer-like run: `wrapper` recompiles on each new length until its limit, and `forward`
// once, both on a new size; then the limit's note and eager calls.
RunFile new_size_run() {
  RunFile run = compiled_run(40);
  for (int k = 1; k <= 7; ++k) {
    recompile(run, k, "wrapper",
              "0/" + std::to_string(k - 1) +
                  ": tensor 'kwargs['input_ids']' size mismatch at "
                  "index 1. expected 51, actual " +
                  std::to_string(40 + k),
              k + 1, 300.0);
  }
  recompile(run, 2, "forward",
            "2/0: tensor 'labels' size mismatch at index 1. expected 51, actual 49", 2, 0.0);
  run.events.push_back({EventKind::kNote,
                        8,
                        1,
                        "gave up",
                        {{"compiler", "dynamo"},
                         {"message",
                          "torch._dynamo hit config.recompile_limit (8)\n function: "
                          "'wrapper' (/venv/site-packages/transformers/utils/"
                          "generic.py:1075)"}}});
  for (int64_t s = 8; s < 40; ++s) run.steps[static_cast<size_t>(s)].compiled->eager_fallbacks = 1;
  run.events.push_back(
      {EventKind::kAlert, 12, 1, "host_syncs: 30 host syncs at step 12", {{"rule", "host_syncs"}}});
  run.events.push_back(
      {EventKind::kAlert, 7, 1, "recompile_budget: ...", {{"rule", "recompile_budget"}}});
  return run;
}

void write_run(const std::string& path, const RunFile& run) {
  RunWriter w(path);
  w.write(run.header);
  for (const StepRecord& s : run.steps) w.write(s);
  for (const EventRecord& e : run.events) w.write(e);
}

RunReport report_of(const RunFile& run) {
  RunReport r;
  r.paths = {run.path};
  r.run = analyze_run(run);
  return r;
}

}  // namespace

TEST_CASE("short_path and frame_name: a package file by its package path") {
  CHECK(short_path("/venv/lib/python3.11/site-packages/transformers/utils/generic.py") ==
        "transformers/utils/generic.py");
  CHECK(short_path("/usr/lib/python3/dist-packages/torch/nn/x.py") == "torch/nn/x.py");
  CHECK(short_path("/home/me/proj/train.py") == "proj/train.py");
  CHECK(short_path("train.py") == "train.py");
  CHECK(frame_name("forward", "/a/b/c.py", 12) == "`forward` (b/c.py:12)");
  CHECK(frame_name("", "", 0) == "`?`");
}

TEST_CASE("html_words: escaped, each pair of backticks as code") {
  CHECK(reports::detail::html_words("a `x<y` and `b`.") ==
        "a <code>x&lt;y</code> and <code>b</code>.");
  CHECK(reports::detail::html_words("one ` alone") == "one ` alone");
  CHECK(reports::detail::html_words("") == "");
}

TEST_CASE("recompile causes: one sentence per cause, with the frames, guard, cost and fix") {
  const RunAnalysis r = analyze_run(new_size_run());
  const std::vector<std::string> lines = recompile_cause_lines(r.compile);
  REQUIRE(lines.size() == 1);  // two frames, one cause
  const std::string& line = lines.front();
  CHECK(line.rfind("A new size: `wrapper` (transformers/utils/generic.py:1075) recompiled 7 times "
                   "(steps 1-7) and reached its recompile limit (8), and 1 other frame once "
                   "(`forward`)",
                   0) == 0);
  CHECK(has(line,
            "guard `tensor 'kwargs['input_ids']' size mismatch at index 1. expected 51, "
            "actual 47`"));
  CHECK(has(line, "1.8 s compiling"));  // step 2 compiled in 0 ms (forward's event set it)
  CHECK(has(line, "Cause: a tensor came with a new size"));
  CHECK(has(line, "Fix: mark the changing dimension dynamic"));
  const std::string eager = eager_fallback_sentence(*r.compile.eager);
  CHECK(eager.rfind("From step 8 compiled frames ran eagerly on 32 of the 32 observed steps (32 "
                    "calls): `wrapper` (transformers/utils/generic.py:1075) reached the "
                    "recompile limit (8) at step 8",
                    0) == 0);
}

TEST_CASE("recompile causes: an unknown guard stands as itself, with its source line and site") {
  RunFile run = compiled_run(20);
  recompile(run, 5, "step", "1/0: ___odd_guard(L['w'])  # y = f(w)  # train.py:9 in step", 2, 10.0);
  const std::vector<std::string> lines = recompile_cause_lines(analyze_run(run).compile);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("Guard `___odd_guard(L['w'])`: `step`", 0) == 0);
  CHECK(has(lines[0], "at train.py:9 in step (`y = f(w)`)"));
  CHECK_FALSE(has(lines[0], "Fix:"));
}

TEST_CASE("the run headline: the title, the findings, the compile alerts by count") {
  const RunHeadline h = run_headline(report_of(new_size_run()));
  CHECK(h.title ==
        "torch.compile recompiled 2 frames 8 times; compiled frames ran eagerly from step 8; 1 "
        "other alert rule fired");
  REQUIRE(h.findings.size() == 3);
  CHECK(h.findings[0].rfind("A new size:", 0) == 0);
  CHECK(h.findings[1].rfind("From step 8", 0) == 0);
  CHECK(h.findings[2] == "`host_syncs` fired at step 12: 30 host syncs at step 12");
  CHECK(h.compile_alerts == "`recompile_budget` once");

  const RunHeadline quiet = run_headline(report_of(compiled_run(10)));
  CHECK(quiet.title == "nothing recompiled after the first compile, and no alert");
  REQUIRE(quiet.findings.size() == 1);
}

TEST_CASE("the run report in Markdown, HTML and JSON: the finding first") {
  const RunReport report = report_of(new_size_run());
  std::ostringstream md, html, js;
  render_run_report(report, ReportFormat::kMarkdown, md);
  render_run_report(report, ReportFormat::kHtml, html);
  render_run_report(report, ReportFormat::kJson, js);
  CHECK(md.str().rfind("### recompdiag report: `job.jsonl` (python) · torch.compile recompiled",
                       0) == 0);
  const size_t finding = md.str().find("- A new size:");
  const size_t phases = md.str().find("| Phase |");
  CHECK(finding < phases);
  CHECK(has(html.str(), "<h1>job.jsonl (python)</h1>"));
  CHECK(has(html.str(), "tensor &#39;kwargs[&#39;input_ids&#39;]&#39; size mismatch"));
  CHECK(has(html.str(), "<svg"));
  CHECK(has(html.str(), "A new size: <code>wrapper</code> (transformers/utils/generic.py:1075)"));
  const json j = json::parse(js.str());
  CHECK(j["kind"] == "recompdiag.report");
  CHECK(j["findings"].size() == 3);
  CHECK(j["run"]["compile"]["frames"].size() == 2);
  CHECK(j["run"]["compile"]["eager_fallback"]["first_step"] == 8);
  CHECK(j["run"]["outcome"]["loss_recorded"] == true);
}

TEST_CASE("report_run_paths: one run, or refuses several with one line") {
  test::TempDir dir;
  const std::string a = dir.file("a.jsonl");
  const std::string b = dir.file("b.jsonl");
  write_run(a, new_size_run());
  write_run(b, compiled_run(5));
  const RunReport r = report_run_paths({a});
  CHECK(r.run.compile.frames.size() == 2);
  CHECK_FALSE(r.job.has_value());
  CHECK_THROWS_WITH_AS(report_run_paths({a, b}),
                       doctest::Contains("a report is of one run or one job's rank files"),
                       InputError);
  CHECK_THROWS_AS(report_run_paths({}), InputError);
}

TEST_CASE("the first screen of a comparison names B's cause, frame, guard and fix") {
  RunFile a = compiled_run(40);
  RunFile b = new_size_run();
  const Comparison c = compare_runs(a, b);
  const std::vector<std::string> causes = compile_cause_lines(c);
  REQUIRE(causes.size() >= 2);
  CHECK(causes[0].rfind("B: A new size: `wrapper`", 0) == 0);
  CHECK(has(causes[0], "Fix: mark the changing dimension dynamic"));
  CHECK(causes[1].rfind("B: From step 8", 0) == 0);
  std::ostringstream md;
  MarkdownRenderer().render(c, md);
  const std::string first_screen = md.str().substr(0, md.str().find("| Question |"));
  CHECK(has(first_screen, "- B: A new size: `wrapper`"));
  CHECK(has(md.str(), "**torch.compile, A against B**"));
  CHECK(has(md.str(),
            "`wrapper` (transformers/utils/generic.py:1075): A recompiled it 0 times, B 7 "
            "times (B reached its recompile limit)"));
  const json j = report_json(c);
  CHECK(j["compile_diff"]["frames"].size() == 2);
  CHECK(j["compile_causes"].size() == causes.size());
  // Alike sides: no cause line, an empty diff.
  const Comparison same = compare_runs(b, b);
  CHECK(compile_cause_lines(same).empty());
  CHECK(compile_diff_lines(same.compile_diff).empty());
}

TEST_CASE("a side that recorded no loss is said so, not compared") {
  const Comparison c = compare_runs(compiled_run(40), compiled_run(40, 0.0));
  std::ostringstream md;
  MarkdownRenderer().render(c, md);
  CHECK(has(md.str(),
            "| Training quality (does not gate) | **not compared** | B recorded no loss (a loss of "
            "0 at every step"));
}

TEST_CASE("GPU busy per phase: kernel time over step time, in the run report and the comparison") {
  const auto gpu_run = [](double kernel_ms_phase2) {
    RunFile run = compiled_run(80);
    for (StepRecord& s : run.steps) {
      s.phase = s.step < 40 ? 1 : 2;
      s.step_in_phase = s.step < 40 ? s.step : s.step - 40;
      s.cupti = CuptiStats{};
      s.cupti->kernel_ms = s.phase == 1 ? 8.0 : kernel_ms_phase2;
    }
    run.events.push_back({EventKind::kPhaseStart, 40, 2, "phase 2", {{"phase", 2}}});
    return run;
  };
  const RunAnalysis r = analyze_run(gpu_run(3.0));
  REQUIRE(r.phases.size() == 2);
  REQUIRE(gpu_busy(r.phases[0]).has_value());
  CHECK(*gpu_busy(r.phases[0]) == doctest::Approx(0.8));
  CHECK(*gpu_busy(r.phases[1]) == doctest::Approx(0.3));
  CHECK_FALSE(gpu_busy(analyze_run(compiled_run(40)).phases[0]).has_value());
  std::ostringstream md;
  render_run_report(report_of(gpu_run(3.0)), ReportFormat::kMarkdown, md);
  CHECK(has(md.str(), "share of the run | GPU busy |"));
  CHECK(has(md.str(), "| 80.0% |"));
  CHECK(has(md.str(), "| 30.0% |"));
  const Comparison c = compare_runs(gpu_run(8.0), gpu_run(3.0));
  CHECK(gpu_busy_sentence(c) ==
        "GPU busy (kernel time over step time, steady state): phase 1 A 80.0%, B 80.0%; phase 2 "
        "A 80.0%, B 30.0%");
  CHECK(gpu_busy_sentence(compare_runs(compiled_run(40), compiled_run(40))).empty());
}
