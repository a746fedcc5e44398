// The public API as 0.3.x spelled it, frozen: a trainer written against 0.3 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.4.0 changed under it without breaking it: `compiles` in --fail-on counts every
// compiler's (the JIT's part is reported as `jit_compiles`), ConvergenceVerdict gained
// kUntestedDifference (one pair is never a regression), CountedCost gained the measured bound.
#include <torch/torch.h>

#include <iostream>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/convergence.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/monitor.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  recompdiag::probes::MonitorOptions options;
  options.log_alerts = false;
  options.take_turns = true;   // 0.3: turns from RECOMPDIAG_TURNS, none here
  options.step_turns = true;
  recompdiag::probes::Monitor monitor(*model, optimizer, options);
  recompdiag::StepRecord last;
  for (int64_t step = 0; step < 3; ++step) {
    recompdiag::probes::StepGuard guard(monitor, last, step);
    optimizer.zero_grad();
    torch::Tensor loss = model(torch::ones({2, 4})).sum();
    loss.backward();
    optimizer.step();
  }

  // 0.3's gate: CompareOptions, --fail-on names, the exit code of a verdict.
  recompdiag::CompareOptions compare;
  compare.turns = true;
  compare.fail_on = recompdiag::parse_fail_on("compiles,syncs");
  compare.validate();
  const int exit_code = recompdiag::exit_code_for(recompdiag::Verdict::kRegression);
  const bool named = !recompdiag::count_names().empty();
  const bool regression_named =
      std::string(recompdiag::to_string(recompdiag::ConvergenceVerdict::kRegression)) ==
      "regression";
  recompdiag::RunHeader header;
  header.turn_every_steps = monitor.turn_every_steps();  // 0 without a channel

  std::cout << "{\"step\":" << last.step << ",\"exit_code\":" << exit_code
            << ",\"fail_on\":" << compare.fail_on.size()
            << ",\"named\":" << (named && regression_named ? "true" : "false")
            << ",\"turn_every_steps\":" << header.turn_every_steps << "}" << std::endl;
  return 0;
}
