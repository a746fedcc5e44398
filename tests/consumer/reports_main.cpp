// Uses recompdiag::core, recompdiag::reports and recompdiag::prometheus from the installed package,
// without LibTorch: writes two synthetic runs, compares them, renders the JSON report, words the
// verdict (reports/words.h) and feeds the exporter. Prints one JSON object with what it found; exit 1 when a step failed.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/words.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  recompdiag::SyntheticRunOptions slow;
  slow.phase_steps = {60, 60};
  slow.phase_scale = {1.0, 1.5};
  recompdiag::SyntheticRunOptions fast = slow;
  fast.mode = "mutable";
  fast.phase_scale = {1.0, 1.0};
  fast.seed = 2;
  recompdiag::write_synthetic_run(dir + "/a.jsonl", fast);
  recompdiag::write_synthetic_run(dir + "/b.jsonl", slow);
  const recompdiag::RunFile a = recompdiag::read_run_file(dir + "/a.jsonl");
  const recompdiag::RunFile b = recompdiag::read_run_file(dir + "/b.jsonl");
  const recompdiag::Comparison comparison = recompdiag::compare_runs(a, b);

  std::ostringstream report;
  recompdiag::reports::make_renderer(recompdiag::reports::ReportFormat::kJson)
      ->render(comparison, report);
  const nlohmann::json parsed = nlohmann::json::parse(report.str());

  int64_t steps_served = -1;
#ifdef CONSUMER_HAVE_PROMETHEUS
  recompdiag::reports::MetricsOptions options;  // no listen address: exposition() only, no server
  recompdiag::reports::PrometheusExporter exporter(options);
  exporter.on_run_start(b.header);
  for (const recompdiag::StepRecord& step : b.steps) exporter.on_step(step);
  const std::string text = exporter.exposition();
  steps_served = text.find("recompdiag_steps_total{") != std::string::npos ? 1 : 0;
#endif
  nlohmann::json out = {{"steps_a", a.steps.size()},
                        {"steps_b", b.steps.size()},
                        {"exit_code", recompdiag::exit_code_for(comparison.verdict)},
                        {"report_schema", parsed.value("schema", -1)},
                        {"summary_as_report",
                         recompdiag::reports::summary(comparison) == parsed.value("summary", "")},
                        {"prometheus_available", recompdiag::reports::prometheus_available()},
                        {"steps_served", steps_served}};
  std::cout << out.dump() << std::endl;
  return 0;
}
