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
  if (monitor) {
    h.cupti = monitor->cupti_availability();
    h.probes = monitor->probe_availability();
  } else {
    h.cupti = {false, "unavailable: monitor off (--no-monitor)"};
    h.probes = {
        {"monitor", {{"available", false}, {"reason", "unavailable: monitor off (--no-monitor)"}}}};
  }
  h.step_timing = probes::step_timing_for(device_used);
  h.config = c.to_json();
  // The hook used, where it is not the RecordFunction callback (the only one before 0.9), so
  // that the headers of runs observed through it stay as they were.
  const auto hook = monitor ? monitor->dispatcher_hook() : std::nullopt;
  if (hook && *hook != probes::DispatchHook::kRecordFunction)
    h.config["dispatch_hook"] = probes::dispatch_hook_name(*hook);
  h.seed = c.seed;
  return h;
}

}  // namespace recompdiag::trainer::detail
