#pragma once
// The exporter's push path: everything in a registry, sent once to a Pushgateway.

#include <prometheus/registry.h>

#include <memory>
#include <ostream>

#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::reports::detail {

// Pushes `registry` to `options.pushgateway_url` (job `options.push_job`, instance
// "<host>:<pid>"). Waits at most `options.push_timeout_seconds`; a gateway that fails or does not
// answer costs one line on `warn`, never an exception from the push itself. Throws InputError only
// for a URL that does not parse.
void push_to_gateway(const std::shared_ptr<prometheus::Registry>& registry,
                     const MetricsOptions& options, std::ostream& warn);

}  // namespace recompdiag::reports::detail
