// The public API as 0.1.0 spelled it, frozen: a user's trainer written then must still compile
// against this release (with deprecation warnings) until the names' deprecation period ends. When
// a name here stops compiling, either keep an alias for it or say in CHANGELOG.md why it broke
// and bump the minor version.
#include <torch/torch.h>

#include <iostream>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/reports/prometheus_exporter.h"

int main() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  recompdiag::MonitorOptions options;  // 0.1.0: recompdiag::MonitorOptions
  options.log_alerts = false;
  recompdiag::Monitor monitor(*model, optimizer, options);  // 0.1.0: recompdiag::Monitor
  recompdiag::StepRecord record;
  {
    recompdiag::StepGuard guard(monitor, record, 0);  // 0.1.0: recompdiag::StepGuard
    torch::Tensor loss = model(torch::ones({2, 4})).sum();
    loss.backward();
    optimizer.step();
  }
  recompdiag::MetricsOptions metrics;  // 0.1.0: recompdiag::MetricsOptions
  recompdiag::CompareOptions compare;
  compare.run_noise = 0.03;  // 0.1.0 assigned a double: still compiles (now an optional)
  std::cout << "{\"step\":" << record.step
            << ",\"metrics_requested\":" << (metrics_requested(metrics) ? "true" : "false") << "}"
            << std::endl;
  return 0;
}
