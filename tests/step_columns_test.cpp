// StepColumns: every step comes back as it went in, runs of alike steps add up to the per-step
// totals, and a synthetic run's columns stay small.
#include "recompdiag/core/step_columns.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/section_totals.h"
#include "recompdiag/core/synthetic_run.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// Steps whose fields change in every way a column must keep: constants, counters, a flag that
// flips, sections that come and go, random times, heads and weights that change, alerts.
std::vector<StepRecord> varied_steps(int n) {
  std::vector<StepRecord> out;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < n; ++i) {
    StepRecord s;
    s.step = i;
    s.phase = i < n / 2 ? 1 : 2;
    s.epoch = (i % (n / 2)) / 7;
    s.step_in_phase = i % (n / 2);
    s.wall_ms = 1.0 + static_cast<double>(next() % 1000) / 7.0;
    s.loss = i == 5 ? std::nan("") : 1.0 / (1.0 + i);
    s.head_losses = std::vector<double>(i % 50 == 49 ? 3 : 2, 0.5 + 0.01 * i);
    s.loss_weights = s.phase == 1 ? std::vector<double>{0.7, 0.3} : std::vector<double>{0.99, 0.01};
    s.lr = i < 40 ? 0.01 : 0.001;
    if (i % 3 != 0) s.device_ms = 0.25 * i;
    if (i % 10 != 7) {
      DispatchStats d;
      d.ops = 180;
      d.sampled = i % 10 == 0;
      d.new_signatures = i == 0 ? 60 : 0;
      d.syncs = static_cast<int64_t>(next() % 3);
      s.dispatch = d;
    }
    JitStats j;
    j.plan_builds = i % 33 == 0 ? 1 : 0;
    s.jit = j;
    OptimizerStats o;
    o.step_min = o.step_max = i < n / 2 ? i + 1 : i - n / 2;
    o.state_reset = i == n / 2;
    o.lr_requested = s.lr;
    o.lr_effective = i > 80 ? 0.01 : s.lr;
    s.optimizer = o;
    if (i > 20) s.memory = MemoryStats{static_cast<int64_t>(1000000 + next() % 4096)};
    if (i % 17 == 3) s.alerts = {"slow_step", "host_sync"};
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("every step comes back from its columns as it went in") {
  const std::vector<StepRecord> steps = varied_steps(200);
  StepColumns columns;
  for (const StepRecord& s : steps) columns.push_back(s);
  REQUIRE(columns.size() == steps.size());
  StepRecord reused;
  for (size_t i = 0; i < steps.size(); ++i) {
    CAPTURE(i);
    CHECK(to_json_line(columns.at(i)) == to_json_line(steps[i]));
    columns.get(i, reused);
    CHECK(to_json_line(reused) == to_json_line(steps[i]));
    CHECK(columns.wall_ms(i) == steps[i].wall_ms);
    CHECK(columns.phase(i) == steps[i].phase);
  }
}

TEST_CASE("a packed column keeps extreme values and falls back to plain storage exactly") {
  PackedColumn c;
  const std::vector<int64_t> values = {INT64_MIN, INT64_MAX, 0, -1, INT64_MAX, INT64_MIN, 5, 5, 5};
  for (int64_t v : values) c.push_back(v);
  for (size_t i = 0; i < values.size(); ++i) CHECK(c[i] == values[i]);
  PackedColumn noisy;
  std::vector<int64_t> seen;
  for (int64_t i = 0; i < 1000; ++i) {
    const int64_t v = (i * 7919) % 1009;
    noisy.push_back(v);
    seen.push_back(v);
  }
  for (size_t i = 0; i < seen.size(); ++i) CHECK(noisy[i] == seen[i]);
  CHECK(noisy.memory_bytes() <= 2 * 1000 * sizeof(int64_t));
}

TEST_CASE("runs of alike steps add up to the per-step totals") {
  const std::vector<StepRecord> steps = varied_steps(300);
  StepColumns columns;
  for (const StepRecord& s : steps) columns.push_back(s);
  for (const auto& [lo, hi] :
       std::vector<std::pair<size_t, size_t>>{{0, 300}, {17, 161}, {150, 151}}) {
    SectionTotals by_step;
    for (size_t i = lo; i < hi; ++i) by_step.add(steps[i]);
    SectionTotals by_run;
    size_t covered = 0;
    columns.for_each_run(lo, hi, [&](const StepRecord& first, const StepRecord& stride, size_t n) {
      by_run.add_run(first, stride, static_cast<int64_t>(n));
      covered += n;
    });
    CHECK(covered == hi - lo);
    for (size_t k = 0; k < by_step.sections().size(); ++k) {
      const SectionTotal& x = by_step.sections()[k];
      const SectionTotal& y = by_run.sections()[k];
      CAPTURE(x.name);
      CHECK(x.steps == y.steps);
      for (size_t f = 0; f < x.fields.size(); ++f) {
        CAPTURE(x.fields[f].name);
        CHECK(x.fields[f].sum == doctest::Approx(y.fields[f].sum));
        CHECK(x.fields[f].max == y.fields[f].max);
        CHECK(x.fields[f].last == y.fields[f].last);
      }
    }
  }
}

TEST_CASE("a run analyses the same from records and from columns read from its file") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  {
    RunWriter w(path);
    RunHeader h;
    h.tool_version = "test";
    w.write(h);
    for (const StepRecord& s : varied_steps(400)) w.write(s);
  }
  const RunFile records = read_run_file(path);
  const ColumnarRun columns = read_columnar_run(path);
  REQUIRE(columns.steps.size() == records.steps.size());
  const RunAnalysis x = analyze_run(records);
  const RunAnalysis y = analyze_run(columns);
  REQUIRE(x.phases.size() == 2);
  REQUIRE(y.phases.size() == 2);
  CHECK(x.slow_stretch_count == y.slow_stretch_count);
  CHECK(x.alerts.size() == y.alerts.size());
  for (size_t p = 0; p < 2; ++p) {
    CHECK(x.phases[p].steady.median_ms == y.phases[p].steady.median_ms);
    CHECK(x.phases[p].counts.syncs == y.phases[p].counts.syncs);
    CHECK(x.phases[p].counts.lr_not_in_effect == y.phases[p].counts.lr_not_in_effect);
    CHECK(x.phases[p].counts.alerts == y.phases[p].counts.alerts);
  }
  CHECK(to_json_line(to_run_file(columns).steps[123]) == to_json_line(records.steps[123]));
}

TEST_CASE("a synthetic run's columns hold a few dozen bytes per step") {
  test::TempDir dir;
  SyntheticRunOptions o;
  o.phase_steps = {20000, 20000};
  write_synthetic_run(dir.file("s.jsonl"), o);
  const ColumnarRun run = read_columnar_run(dir.file("s.jsonl"));
  REQUIRE(run.steps.size() == 40000);
  // Times and losses are plain doubles (wall, loss, two heads: 32 bytes); the rest forms runs.
  CHECK(static_cast<double>(run.steps.memory_bytes()) / 40000.0 < 40.0);
}
