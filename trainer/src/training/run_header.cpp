#include "training/run_header.h"

#include "recompdiag/probes/run_recorder.h"

namespace recompdiag::trainer::detail {

RunHeader make_run_header(const TrainConfig& c, const std::string& device_used, bool cuda_available,
                          const probes::Monitor* monitor) {
  RunHeader h = probes::run_header_here();  // versions, host, start time
  h.mode = to_string(c.mode);
  h.optimizer_handoff = c.mode == TrainMode::kRecompile ? to_string(c.handoff) : "none";
  h.optimizer = "Adam";
  h.device_requested = c.device;
  h.device_used = device_used;
  h.cuda_available = cuda_available;
  h.step_timing = probes::step_timing_for(device_used);
  h.config = c.to_json();
  if (monitor) {
    monitor->describe(h);  // its probes, CUPTI, and the dispatcher's hook in the config
  } else {
    h.cupti = {false, "unavailable: monitor off (--no-monitor)"};
    h.probes = {
        {"monitor", {{"available", false}, {"reason", "unavailable: monitor off (--no-monitor)"}}}};
  }
  h.seed = c.seed;
  return h;
}

}  // namespace recompdiag::trainer::detail
