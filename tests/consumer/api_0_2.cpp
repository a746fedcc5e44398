// The public API as 0.2.0 spelled it, frozen: a trainer written against 0.2.0 must still compile
// and behave against this release. When a line here stops compiling, either keep an alias for
// the name or say in CHANGELOG.md why it broke and bump the minor version.
// What 0.3.0 moved under it: ProbeCounts and kProbeCountFields to probe_counts.h (included by
// analysis.h), kProbeCountFields from a C array to a std::array, ProbeCountField's new members
// (defaulted), the lr tolerance constant, OptimizerStateProbe's sources.
#include <torch/torch.h>

#include <iostream>
#include <iterator>
#include <string>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/health.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/probes/optimizer_probe.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  recompdiag::probes::MonitorOptions options;
  options.log_alerts = false;
  recompdiag::probes::Monitor monitor(*model, optimizer, options);
  monitor.set_requested_lr(1e-3);
  monitor.note_event(recompdiag::EventKind::kPhaseStart, "phase 1", {{"phase", 1}});
  recompdiag::StepRecord last;
  for (int64_t step = 0; step < 3; ++step) {
    recompdiag::probes::StepGuard guard(monitor, last, step);
    optimizer.zero_grad();
    torch::Tensor loss = model(torch::ones({2, 4})).sum();
    loss.backward();
    optimizer.step();
  }
  const std::vector<recompdiag::EventRecord> events = monitor.take_events();

  // 0.2.0 declared these in analysis.h, kProbeCountFields as a C array of 4-member aggregates.
  recompdiag::ProbeCounts counts;
  counts.steps = 3;
  counts.jit_compiles = 2;
  counts.has_jit = true;
  const recompdiag::ProbeCountField mine = {"steps", "steps", nullptr,
                                            &recompdiag::ProbeCounts::steps};
  int64_t listed = 0;
  int64_t total = counts.*mine.value;
  for (const recompdiag::ProbeCountField& f : recompdiag::kProbeCountFields) {
    ++listed;
    if (std::string(f.key) == "jit_compiles" && counts.*f.measured) total += counts.*f.value;
  }
  const bool sized = std::size(recompdiag::kProbeCountFields) == static_cast<size_t>(listed);

  // A standalone optimizer probe, as 0.2.0 built it.
  recompdiag::probes::OptimizerStateProbe probe(&optimizer);
  probe.set_optimizer(&optimizer);

  recompdiag::HealthOptions health;
  recompdiag::CompareOptions compare;
  compare.run_noise = 0.05;  // an optional since 0.2.0

  std::cout << "{\"step\":" << last.step << ",\"optimizer_state\":"
            << (last.optimizer ? last.optimizer->params_with_state : -1)
            << ",\"events\":" << events.size() << ",\"counts_total\":" << total
            << ",\"counts_listed\":" << (sized && listed > 10 ? "true" : "false")
            << ",\"lr_tolerance\":" << health.lr_rel_tolerance << "}" << std::endl;
  return 0;
}
