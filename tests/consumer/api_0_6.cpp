// The public API as 0.6.x spelled it, frozen: a trainer written against 0.6 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.7.0 changed under it without breaking it: dispatcher sampling defaults to every 25th
// step, the Monitor checks its health thresholds, and lib's prose fields were deprecated (this
// file reads none of them).
#include <torch/torch.h>

#include <iostream>
#include <optional>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/lr_plateau.h"
#include "recompdiag/core/probe_counts.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/run_recorder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_api_0_6 RUN_FILE\n";
    return 2;
  }
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  // 0.6's ReduceLROnPlateau, core's, stepping the lr the recorder then checks.
  recompdiag::PlateauOptions plateau;
  plateau.patience = 0;
  recompdiag::ReduceLrOnPlateau schedule(plateau);
  recompdiag::probes::RunRecorderOptions run;
  run.out = argv[1];
  run.mode = "api_0_6";
  run.monitor.log_alerts = false;
  int lr_drops = 0;
  {
    recompdiag::probes::RunRecorder recorder(*model, optimizer, run);
    for (int64_t step = 0; step < 4; ++step) {
      recorder.begin_step();
      optimizer.zero_grad();
      torch::Tensor loss = model(torch::ones({2, 4})).sum();
      loss.backward();
      optimizer.step();
      recorder.end_step(loss);
      // A loss that never improves: the plateau drops the lr after each epoch but the first.
      if (std::optional<double> lr = schedule.on_epoch_end(1.0, 1e-3)) lr_drops += *lr < 1e-3;
    }
  }
  const recompdiag::RunFile file = recompdiag::read_run_file(run.out);

  // 0.6's one table of counts: each line's words, umbrella and gate; the gates in its order.
  int parts_of_compiles = 0;
  for (const recompdiag::ProbeCountField& f : recompdiag::kProbeCounts) {
    if (f.part_of != nullptr && std::string(f.part_of) == recompdiag::kCompilesUmbrella &&
        f.one != nullptr && f.many != nullptr) {
      ++parts_of_compiles;
    }
  }
  const bool gates_in_order = !recompdiag::gate_counts().empty() &&
                              recompdiag::gate_counts().front().name == "compiles" &&
                              recompdiag::count_names().size() == recompdiag::gate_counts().size();
  recompdiag::ProbeCounts counts;
  counts.has_transfers = false;

  std::cout << "{\"steps\":" << file.steps.size() << ",\"lr_drops\":" << lr_drops
            << ",\"table\":" << (parts_of_compiles >= 2 && gates_in_order ? "true" : "false")
            << ",\"jit_compiles\":" << counts.jit_compiles_seen() << "}" << std::endl;
  return 0;
}
