#pragma once
// The header a trainer's run file starts with: what ran, where, with which probes. Torch-free.

#include <string>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer::detail {

/// The header for a run of `config` on `device_used` ("cpu", "cuda:0"); `monitor` (null with
/// --no-monitor) gives the probes' availability. Stamps the start time (UTC) and host name.
RunHeader make_run_header(const TrainConfig& config, const std::string& device_used,
                          bool cuda_available, const probes::Monitor* monitor);

}  // namespace recompdiag::trainer::detail
