#include "detail/pushgateway.h"

#include <prometheus/gateway.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>

namespace recompdiag::reports::detail {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

void push_to_gateway(const std::shared_ptr<prometheus::Registry>& registry,
                     const MetricsOptions& options, std::ostream& warn) {
  const PushgatewayAddress gw = parse_pushgateway_url(options.pushgateway_url);
  // The push runs on its own thread with shared ownership, so a gateway that never answers costs
  // the run at most push_timeout_seconds; the thread is then left to finish on its own.
  auto gateway = std::make_shared<prometheus::Gateway>(
      gw.scheme_host, std::to_string(gw.port), options.push_job,
      prometheus::Labels{{"instance", host_name() + ":" + std::to_string(::getpid())}});
  gateway->RegisterCollectable(registry);
  std::packaged_task<int()> task([gateway, keep = registry] {
    try {
      return gateway->Push();
    } catch (...) {
      return -1;
    }
  });
  auto result = task.get_future();
  std::thread(std::move(task)).detach();
  const auto timeout = std::chrono::duration<double>(options.push_timeout_seconds);
  if (result.wait_for(timeout) != std::future_status::ready) {
    warn << "warning: pushgateway " << options.pushgateway_url << " did not answer within "
         << options.push_timeout_seconds << " s; metrics not pushed\n";
    return;
  }
  const int code = result.get();
  if (code < 200 || code >= 300) {
    warn << "warning: pushgateway " << options.pushgateway_url << ": push failed ("
         << (code < 0 ? "unreachable, curl error " + std::to_string(-code)
                      : "HTTP " + std::to_string(code))
         << "); metrics not pushed\n";
  }
}

}  // namespace recompdiag::reports::detail
