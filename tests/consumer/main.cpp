// A small torch::nn::Linear + Adam loop with the monitor linked in from the installed package.
// Prints one JSON object: the probes' availability and, per step, what the monitor reported.
// Step 3 falls into the lr trap (lr set on a copy of the options), which the monitor must flag.
#include <torch/torch.h>

#include <iostream>

#include "recompdiag/probes/monitor.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(8, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  recompdiag::probes::MonitorOptions options;
  options.expected_device = "cpu";
  options.log_alerts = false;
  recompdiag::probes::Monitor monitor(*model, optimizer, options);
  monitor.set_requested_lr(1e-3);

  nlohmann::json steps = nlohmann::json::array();
  const torch::Tensor x = torch::randn({16, 8});
  const torch::Tensor y = torch::randn({16, 1});
  for (int64_t step = 0; step < 5; ++step) {
    if (step == 3) {
      auto copy = static_cast<torch::optim::AdamOptions&>(optimizer.defaults());  // the trap
      copy.lr(1e-4);
      monitor.set_requested_lr(copy.lr());
    }
    recompdiag::StepRecord record;
    {
      recompdiag::probes::StepGuard guard(monitor, record, step);
      optimizer.zero_grad();
      torch::Tensor loss = torch::mse_loss(model(x), y);
      loss.backward();
      optimizer.step();
    }
    steps.push_back({{"step", record.step},
                     {"ops", record.dispatch ? record.dispatch->ops : -1},
                     {"params_with_state", record.optimizer->params_with_state},
                     {"state_off_device", record.optimizer->state_off_device},
                     {"step_max", record.optimizer->step_max},
                     {"lr_effective", record.optimizer->lr_effective},
                     {"alerts", record.alerts}});
  }
  nlohmann::json out = {{"probes", monitor.probe_availability()}, {"steps", steps}};
  std::cout << out.dump() << std::endl;
  return 0;
}
