// The public API as 0.4.x spelled it, frozen: a trainer written against 0.4 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.5.0 changed under it without breaking it: CompiledStats gained the compile ledger's
// fields, EventKind gained kGraphBreak, rank_file_path moved to core (trainer's name stays), and
// --fail-on takes graph_breaks and compile_cache_misses.
#include <torch/torch.h>

#include <iostream>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/convergence.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/run_recorder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_api_0_4 RUN_FILE\n";
    return 2;
  }
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  // 0.4's recorder: a run file from marking the steps.
  recompdiag::probes::RunRecorderOptions run;
  run.out = argv[1];
  run.mode = "api_0_4";
  run.monitor.log_alerts = false;
  {
    recompdiag::probes::RunRecorder recorder(*model, optimizer, run);
    for (int64_t step = 0; step < 4; ++step) {
      recorder.begin_step();
      optimizer.zero_grad();
      torch::Tensor loss = model(torch::ones({2, 4})).sum();
      loss.backward();
      optimizer.step();
      recorder.end_step(loss);
    }
  }
  const recompdiag::RunFile file = recompdiag::read_run_file(argv[1]);

  // 0.4's gate: the gate counts with their help, an umbrella count, a measured bound.
  recompdiag::CompareOptions compare;
  compare.fail_on = recompdiag::parse_fail_on("compiles,jit_compiles,dynamo_compiles");
  compare.validate();
  const bool gate_counts = !recompdiag::gate_counts().empty() &&
                           !recompdiag::gate_counts().front().help.empty();
  recompdiag::CountedCost cost;
  cost.measured_s = 0.5;
  const bool untested = std::string(recompdiag::to_string(
                            recompdiag::ConvergenceVerdict::kUntestedDifference)) ==
                        "untested difference";

  std::cout << "{\"steps\":" << file.steps.size() << ",\"fail_on\":" << compare.fail_on.size()
            << ",\"named\":" << (gate_counts && untested && !cost.measured_bounds ? "true" : "false")
            << ",\"summary\":" << (file.summary ? "true" : "false") << "}" << std::endl;
  return 0;
}
