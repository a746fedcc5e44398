// The history page: change points grouped by commit with their causes once, the runs' links, a
// chart per series that changed, and the counts that never did.
#include "recompdiag/reports/history_report.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "recompdiag/core/recompile_cause.h"

using namespace recompdiag;

namespace {

// Runs c0..c5: phase 1's dynamo_compiles 1, then 3 from c3 on with a new guard; graph_breaks 0.
std::vector<HistoryRun> runs() {
  std::vector<HistoryRun> out;
  for (int i = 0; i < 6; ++i) {
    HistoryRun r;
    r.id = i + 1;
    r.commit = "c" + std::to_string(i);
    HistoryPhase p;
    p.steady_steps = 10;
    p.median_ms = 4.0 + 0.01 * i;
    p.low_ms = p.median_ms - 0.1;
    p.high_ms = p.median_ms + 0.1;
    p.counts = {{"dynamo_compiles", i >= 3 ? 3 : 1}, {"graph_breaks", 0}};
    r.phases.push_back(p);
    if (i >= 3) {
      r.causes.push_back(
          {"guard", "forward (model.py:12)", "L['scale']", recompile_causes().front().key, 2, 4});
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("history report: change points by commit, causes once, links and charts") {
  const std::vector<HistoryRun> history = runs();
  reports::HistoryReport r;
  r.store = "SQLite file h.db";
  r.series = history_series(history);
  for (const HistorySeries& s : r.series) {
    if (s.is_time()) continue;
    for (ChangePoint& cp : count_change_points(s)) r.changes.push_back({cp, false, false});
  }
  REQUIRE(r.changes.size() == 1);
  r.run_links[4] = "runs/4.html";
  std::ostringstream out;
  reports::render_history_html(r, out);
  const std::string html = out.str();
  CAPTURE(html);
  CHECK(html.find("<h1>recompdiag history: 1 change point, 1 regression not acknowledged</h1>") !=
        std::string::npos);
  CHECK(html.find("<h3>Commit <code>c3</code>: 1 change point, a regression nobody "
                  "acknowledged</h3>") != std::string::npos);
  CHECK(html.find("c2 &rarr; <a href=\"runs/4.html\">c3</a>") != std::string::npos);
  const std::string fix = std::string("fix: ") + recompile_causes().front().fix;
  CHECK(html.find("guard L[&#39;scale&#39;] failed on forward (model.py:12)") != std::string::npos);
  CHECK(html.find(fix.substr(0, 20)) != std::string::npos);
  CHECK(html.find("recompdiag history ack --commit c3") != std::string::npos);
  // A chart for the median and the count that changed; graph_breaks listed as never changed.
  CHECK(html.find("<h2>phase 1 steady median ms</h2>") != std::string::npos);
  CHECK(html.find("<h2>phase 1 dynamo_compiles</h2>") != std::string::npos);
  CHECK(html.find("<h2>phase 1 graph_breaks</h2>") == std::string::npos);
  CHECK(html.find("phase 1 graph_breaks (0)") != std::string::npos);
  // The same in Markdown, as `history check` prints it.
  r.runs = history.size();
  const std::string md = reports::render_history_markdown(r);
  CHECK(md.rfind("### recompdiag history check: 6 runs, ", 0) == 0);
  CHECK(md.find("**an unacknowledged regression** (exit 1)") != std::string::npos);
  CHECK(md.find("**Commit `c3`**: 1 change point, a regression nobody acknowledged\n"
                "- **regression** in phase 1 dynamo_compiles: 1 -> 3 (exact; 3 runs at the new "
                "value)\n- with it: guard L['scale'] failed on forward (model.py:12)") !=
        std::string::npos);
  // Acknowledged, it is no longer the page's regression.
  r.changes[0].acknowledged = true;
  std::ostringstream acked;
  reports::render_history_html(r, acked);
  CHECK(acked.str().find("0 regressions not acknowledged") != std::string::npos);
  CHECK(acked.str().find("(acknowledged)") != std::string::npos);
  CHECK(reports::render_history_markdown(r).find("no unacknowledged regression") !=
        std::string::npos);
}

TEST_CASE("history report: the commits with a regression nobody acknowledged come first") {
  std::vector<HistoryChange> changes(3);
  changes[0].change.commit = "a";  // an improvement
  changes[1].change.commit = "b";
  changes[1].change.regression = true;
  changes[1].acknowledged = true;
  changes[2].change.commit = "c";
  changes[2].change.regression = true;
  CHECK(reports::history_change_commits(changes) == std::vector<std::string>{"c", "a", "b"});
  HistoryCause guard{"guard", "f (m.py:1)", "L['x']", "", 1, 0};
  changes[2].change.new_causes = {guard, guard};
  CHECK(reports::history_commit_causes(changes, "c").size() == 1);
  CHECK(reports::history_cause_words(guard) == "guard L['x'] failed on f (m.py:1) (1x)");
  CHECK(reports::history_cause_words({"compile", "", "phase 2: lr 0.01 -> 0.001", "", 2, 5}) ==
        "a compile: phase 2: lr 0.01 -> 0.001 (2x)");
}
