#include "detail/run_header.h"

#include <torch/version.h>
#include <unistd.h>

#include <ctime>

#include "recompdiag/core/version.h"

namespace recompdiag::trainer::detail {

namespace {

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

RunHeader make_run_header(const TrainConfig& c, const std::string& device_used, bool cuda_available,
                          const probes::Monitor* monitor) {
  RunHeader h;
  h.tool_version = kToolVersion;
  h.mode = to_string(c.mode);
  h.optimizer_handoff = c.mode == TrainMode::kRecompile ? to_string(c.handoff) : "none";
  h.optimizer = "Adam";
  h.device_requested = c.device;
  h.device_used = device_used;
  h.torch_version = TORCH_VERSION;
  h.cuda_available = cuda_available;
  if (monitor) {
    h.cupti = monitor->cupti_availability();
    h.probes = monitor->probe_availability();
  } else {
    h.cupti = {false, "unavailable: monitor off (--no-monitor)"};
    h.probes = {
        {"monitor", {{"available", false}, {"reason", "unavailable: monitor off (--no-monitor)"}}}};
  }
  h.step_timing = device_used.rfind("cuda", 0) == 0
                      ? "host steady clock around the step; ends after the loss read, which "
                        "synchronises with the device, so device work is included"
                      : "host steady clock around the step";
  h.config = c.to_json();
  h.seed = c.seed;
  h.start_time = utc_now_iso();
  h.host = host_name();
  return h;
}

}  // namespace recompdiag::trainer::detail
