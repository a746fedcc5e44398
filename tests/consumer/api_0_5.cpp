// The public API as 0.5.x spelled it, frozen: a trainer written against 0.5 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.6.0 changed under it without breaking it: the gate counts come from kProbeCounts (in its
// order), syncs and copies are one probe's each, and Keras's plateau is core's.
#include <torch/torch.h>

#include <iostream>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/core/recompile_cause.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/run_recorder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_api_0_5 RUN_FILE\n";
    return 2;
  }
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  // 0.5's recorder with a rank's file name from core.
  recompdiag::probes::RunRecorderOptions run;
  run.out = recompdiag::rank_file_path(argv[1], 0);
  run.mode = "api_0_5";
  run.monitor.log_alerts = false;
  {
    recompdiag::probes::RunRecorder recorder(*model, optimizer, run);
    for (int64_t step = 0; step < 3; ++step) {
      recorder.begin_step();
      optimizer.zero_grad();
      torch::Tensor loss = model(torch::ones({2, 4})).sum();
      loss.backward();
      optimizer.step();
      recorder.end_step(loss);
    }
  }
  const recompdiag::RunFile file = recompdiag::read_run_file(run.out);

  // 0.5's compile ledger, graph-break events and causes.
  recompdiag::CompiledStats compiled;
  compiled.ledger = true;
  compiled.graph_breaks = 1;
  compiled.fx_cache_misses = 2;
  const bool event_kind =
      std::string(recompdiag::to_string(recompdiag::EventKind::kGraphBreak)) == "graph_break";
  const recompdiag::RecompileCause* cause =
      recompdiag::classify_guard_failure("L['lr'] == 0.01");

  // 0.5's gate counts, and the reports' table read by key and label.
  recompdiag::CompareOptions compare;
  compare.fail_on = recompdiag::parse_fail_on("graph_breaks,compile_cache_misses");
  compare.validate();
  int reported = 0;
  for (const recompdiag::ProbeCountField& f : recompdiag::kProbeCountFields) {
    reported += std::string(f.key) == "graph_breaks" && f.label != nullptr;
  }

  std::cout << "{\"steps\":" << file.steps.size() << ",\"fail_on\":" << compare.fail_on.size()
            << ",\"named\":"
            << (event_kind && cause != nullptr && reported == 1 && compiled.graph_breaks == 1
                    ? "true"
                    : "false")
            << "}" << std::endl;
  return 0;
}
