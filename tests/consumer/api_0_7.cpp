// The public API as 0.7.x spelled it, frozen: a trainer written against 0.7 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.8.0 changed under it: lib's deprecated prose fields are gone (this file reads none of
// them: the words are reports/words.h's). What 0.9 changed under it without breaking it: the
// dispatcher probe's default hook is the mode key in a C++ loop (DispatchHook::kAuto), which
// sees the thread that begins the step and its backward (this file's one thread).
#include <torch/torch.h>

#include <iostream>
#include <string>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/history.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/dispatch_hook.h"
#include "recompdiag/probes/run_recorder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_api_0_7 RUN_FILE\n";
    return 2;
  }
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  // 0.7's one sampling default and the checked health thresholds.
  recompdiag::probes::RunRecorderOptions run;
  run.out = argv[1];
  run.mode = "api_0_7";
  run.monitor.log_alerts = false;
  const bool one_default =
      run.monitor.dispatcher_sample_every == recompdiag::probes::kDefaultDispatcherSampleEvery;
  recompdiag::HealthOptions bad;
  bad.rolling_window = 0;
  bool refused = false;
  try {
    bad.validate();
  } catch (const std::exception&) {
    refused = true;
  }
  {
    recompdiag::probes::RunRecorder recorder(*model, optimizer, run);
    for (int64_t step = 0; step < 30; ++step) {
      recorder.begin_step();
      optimizer.zero_grad();
      torch::Tensor loss = model(torch::ones({2, 4})).sum();
      loss.backward();
      optimizer.step();
      recorder.end_step(loss);
    }
  }
  const recompdiag::RunFile file = recompdiag::read_run_file(run.out);

  // 0.7's history of a run: what a store keeps of it, and the series of two commits' runs (one
  // per phase and metric).
  const recompdiag::RunAnalysis analysis = recompdiag::analyze_run(file);
  recompdiag::HistoryRun kept = recompdiag::history_run(analysis);
  kept.commit = "abc123";
  recompdiag::HistoryRun next = kept;  // the same run again, as the next commit's: a series
  next.commit = "def456";
  const std::vector<recompdiag::HistoryRun> runs = {kept, next};
  const std::vector<recompdiag::HistorySeries> series = recompdiag::history_series(runs);
  const int64_t compiles =
      recompdiag::umbrella_total(analysis.phases.front().counts, recompdiag::kCompilesUmbrella);

  std::cout << "{\"steps\":" << kept.steps << ",\"phases\":" << kept.phases.size()
            << ",\"series\":" << (series.empty() ? "false" : "true")
            << ",\"checked\":" << (one_default && refused ? "true" : "false")
            << ",\"compiles\":" << compiles << "}" << std::endl;
  return 0;
}
