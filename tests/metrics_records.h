#pragma once
// Synthetic but realistic records for the Prometheus exporter's tests, driver and benchmarks, and a
// plain-socket HTTP client for scraping over loopback.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "recompdiag/core/record.h"

namespace recompdiag::test {

/// Header of a run as the trainer writes it: probes dispatcher, jit, optimizer, placement on;
/// cupti off with a reason.
inline RunHeader synthetic_header(const std::string& mode, const std::string& start_time) {
  RunHeader h;
  h.tool_version = "0.2.0";
  h.mode = mode;
  h.optimizer_handoff = mode == "mutable" ? "none" : "fresh";
  h.device_requested = "cuda";
  h.device_used = "cuda:0";
  h.torch_version = "1.13.0";
  h.cuda_available = true;
  h.cupti = {false, "unavailable: libcupti not found"};
  h.step_timing = "host clock, sync at step end";
  h.probes = {{sections::kDispatch, {{"available", true}, {"reason", ""}}},
              {"jit", {{"available", true}, {"reason", ""}}},
              {"optimizer", {{"available", true}, {"reason", ""}}},
              {"placement", {{"available", true}, {"reason", ""}}},
              {"cupti", {{"available", false}, {"reason", "unavailable: libcupti not found"}}}};
  h.start_time = start_time;
  h.host = "testhost";
  return h;
}

/// Step `i` of a two-head run. In phase 2 of the "recompile" mode the optimizer state sits on the
/// host, the model runs some ops there and copies both ways: the slowdown the tool diagnoses.
inline StepRecord synthetic_step(int64_t i, int phase, const std::string& mode, double wall_ms) {
  StepRecord s;
  s.step = i;
  s.phase = phase;
  s.step_in_phase = i;
  s.wall_ms = wall_ms;
  s.device_ms = wall_ms * 0.8;
  s.loss = 1.0 / (1.0 + 0.01 * static_cast<double>(i));
  s.head_losses = {s.loss * 0.7, s.loss * 0.5};
  s.loss_weights = phase == 1 ? std::vector<double>{1.0, 0.0} : std::vector<double>{0.5, 0.5};
  s.lr = phase == 1 ? 1e-3 : 5e-4;
  const bool slow = phase == 2 && mode == "recompile";
  DispatchStats d;
  d.ops = 120;
  d.ops_cpu = slow ? 40 : 0;
  d.ops_cuda = d.ops - d.ops_cpu;
  d.host_ops = d.ops_cpu;
  d.copies_h2d = slow ? 12 : 1;
  d.copies_d2h = slow ? 12 : 0;
  d.bytes_h2d = d.copies_h2d * 4096;
  d.bytes_d2h = d.copies_d2h * 4096;
  d.syncs = slow ? 3 : 0;
  d.recorder_syncs = 1;
  d.new_signatures = i % 50 == 0 ? 7 : 0;
  d.dropped = i % 97 == 0 ? 1 : 0;
  s.dispatch = d;
  JitStats j;
  j.compiles = i == 0 ? 1 : 0;
  j.plan_builds = i % 100 == 0 ? 1 : 0;
  j.profiling_runs = i < 2 ? 1 : 0;
  s.jit = j;
  OptimizerStats o;
  o.params = 8;
  o.params_with_state = 8;
  o.state_tensors = 16;
  o.state_bytes = 16 * 65536;
  o.state_off_device = slow ? 16 : 0;
  o.step_min = o.step_max = i + 1;
  o.lr_requested = s.lr;
  o.lr_effective = s.lr;
  s.optimizer = o;
  s.placement = PlacementStats{};
  if (slow && i % 10 == 0) s.alerts = {"optimizer_state_off_device", "host_ops"};
  return s;
}

/// Response of an HTTP GET over loopback.
struct HttpResponse {
  int status = 0;
  std::string body;
};

/// GET `path` from 127.0.0.1:`port` with HTTP/1.0 on a plain socket (no keep-alive, no gzip).
/// Throws std::runtime_error when the connection fails.
inline HttpResponse http_get(int port, const std::string& path = "/metrics", int timeout_s = 10) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  timeval tv{timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    throw std::runtime_error("connect to 127.0.0.1:" + std::to_string(port) + " failed");
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[16384];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, n);
  ::close(fd);
  HttpResponse r;
  if (raw.rfind("HTTP/1.", 0) == 0 && raw.size() > 12) r.status = std::stoi(raw.substr(9, 3));
  const auto split = raw.find("\r\n\r\n");
  if (split != std::string::npos) r.body = raw.substr(split + 4);
  return r;
}

/// Parses exposition text into "name{labels}" -> value, labels as written by the exporter.
inline std::map<std::string, double> parse_samples(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  ::close(fd);
  return ntohs(sa.sin_port);
}

}  // namespace recompdiag::test
