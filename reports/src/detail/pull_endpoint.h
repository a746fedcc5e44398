#pragma once
// The exporter's pull endpoint: a prometheus-cpp Exposer (civetweb) serving one registry at
// /metrics, and its prompt shutdown.

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::reports::detail {

// Serves `registry` at http://HOST:PORT/metrics from construction to destruction. Not copyable or
// movable: it owns a listening socket and server threads.
class PullEndpoint {
 public:
  // Binds `options.listen_addr` (which must not be empty). Throws InputError when it cannot.
  PullEndpoint(const MetricsOptions& options, std::shared_ptr<prometheus::Registry> registry);
  // Stops the server without waiting for civetweb's 2 s accept poll.
  ~PullEndpoint();
  PullEndpoint(const PullEndpoint&) = delete;
  PullEndpoint& operator=(const PullEndpoint&) = delete;
  PullEndpoint(PullEndpoint&&) = delete;
  PullEndpoint& operator=(PullEndpoint&&) = delete;

  // The port it listens on (the kernel's choice when port 0 was asked).
  int port() const { return port_; }
  // "http://HOST:PORT/metrics".
  std::string url() const;

 private:
  ListenAddress listen_;
  int port_ = 0;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace recompdiag::reports::detail
