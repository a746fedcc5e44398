#include "detail/pull_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "detail/thread_stack_floor.h"
#include "recompdiag/core/error.h"

namespace recompdiag::reports::detail {
namespace {

// Opens and closes a connection to host:port, ignoring failure.
void knock(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  // A wildcard listener is reached through loopback.
  ::inet_pton(AF_INET, host == "0.0.0.0" ? "127.0.0.1" : host.c_str(), &sa.sin_addr);
  ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  ::close(fd);
}

}  // namespace

PullEndpoint::PullEndpoint(const MetricsOptions& options,
                           std::shared_ptr<prometheus::Registry> registry)
    : listen_(parse_listen_address(options.listen_addr)) {
  const std::string bind = listen_.host + ":" + std::to_string(listen_.port);
  // civetweb's threads get at least this stack (thread_stack_floor.cpp); the call also keeps that
  // object, and with it the interposed pthread_attr_setstacksize, in every executable.
  static_assert(kThreadStackFloor > 0x19000, "above civetweb's compiled-in thread stack");
  (void)floored_stack_size(0);
  try {
    // civetweb serves a connection per worker thread until the request is read or times out:
    // its 30 s default request timeout let two silent connections starve every scrape. A short
    // timeout and more workers keep 1,000 held connections from doing so (tests/metrics_abuse).
    exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", bind, "num_threads", std::to_string(options.http_threads),
        "request_timeout_ms", std::to_string(options.http_request_timeout_ms)});
  } catch (const std::exception&) {
    // civetweb's exception does not say why; a plain bind gets the kernel's reason.
    check_listen_address_free(options);
    throw InputError("--metrics-addr " + options.listen_addr + ": cannot listen on " + bind +
                     ": the HTTP server did not start");
  }
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? listen_.port : ports.front();
  exposer_->RegisterCollectable(std::move(registry));
}

PullEndpoint::~PullEndpoint() {
  // civetweb's stop waits for its accept loop, which polls with a 2 s timeout; a connection wakes
  // it at once. Knock every 20 ms until the server is gone, so a run's end does not wait 2 s.
  std::atomic<bool> stopped{false};
  std::thread knocker([&stopped, host = listen_.host, port = port_] {
    while (!stopped) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!stopped) knock(host, port);
    }
  });
  exposer_.reset();
  stopped = true;
  knocker.join();
}

std::string PullEndpoint::url() const {
  return "http://" + listen_.host + ":" + std::to_string(port_) + "/metrics";
}

}  // namespace recompdiag::reports::detail
