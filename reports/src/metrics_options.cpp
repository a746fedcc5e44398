// Parsing and validation of the live-metrics options; built with or without prometheus-cpp.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::reports {
namespace {

// Digits only, 0..65535; -1 otherwise.
int parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5) return -1;
  int port = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    port = port * 10 + (c - '0');
  }
  return port <= 65535 ? port : -1;
}

bool is_ipv4(const std::string& text) {
  in_addr addr{};
  return ::inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

bool is_hostname(const std::string& text) {
  if (text.empty() || text.size() > 253) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  }
  return text.front() != '-' && text.front() != '.';
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  const auto fail = [&text](const std::string& why) {
    return InputError("--metrics-addr '" + text + "': " + why +
                      " (expected HOST[:PORT], HOST an IPv4 address or "
                      "localhost, e.g. 127.0.0.1:" +
                      std::to_string(kDefaultMetricsPort) + ")");
  };
  if (text.empty()) throw fail("empty address");
  if (text.front() == '[') throw fail("IPv6 addresses are not supported");
  ListenAddress result;
  const auto colon = text.rfind(':');
  std::string host = text.substr(0, colon);
  if (colon != std::string::npos) {
    if (text.find(':') != colon) throw fail("IPv6 addresses are not supported");
    result.port = parse_port(text.substr(colon + 1));
    if (result.port < 0) throw fail("port must be a number from 0 to 65535");
  }
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) throw fail("missing host");
  if (!is_ipv4(host)) throw fail("host '" + host + "' is not an IPv4 address");
  result.host = host;
  return result;
}

PushgatewayAddress parse_pushgateway_url(const std::string& text) {
  const auto fail = [&text](const std::string& why) {
    return InputError("--pushgateway '" + text + "': " + why +
                      " (expected http[s]://HOST[:PORT], e.g. http://127.0.0.1:" +
                      std::to_string(kDefaultPushgatewayPort) + ")");
  };
  std::string scheme;
  std::string rest;
  if (text.rfind("http://", 0) == 0) {
    scheme = "http://";
  } else if (text.rfind("https://", 0) == 0) {
    scheme = "https://";
  } else {
    throw fail("URL must start with http:// or https://");
  }
  rest = text.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) throw fail("a path is not supported");
  PushgatewayAddress result;
  std::string host = rest;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) throw fail("unclosed '['");
    host = rest.substr(0, close + 1);
    const std::string tail = rest.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') throw fail("junk after the host");
      result.port = parse_port(tail.substr(1));
    }
  } else if (const auto colon = rest.find(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    result.port = parse_port(rest.substr(colon + 1));
    if (!is_hostname(host)) throw fail("bad host '" + host + "'");
  } else if (!is_hostname(host)) {
    throw fail("bad host '" + host + "'");
  }
  if (result.port <= 0) throw fail("port must be a number from 1 to 65535");
  result.scheme_host = scheme + host;
  return result;
}

void MetricsOptions::validate() const {
  if (!listen_addr.empty()) parse_listen_address(listen_addr);
  if (!pushgateway_url.empty()) parse_pushgateway_url(pushgateway_url);
  if (!std::isfinite(hold_seconds) || hold_seconds < 0) {
    throw InputError("--metrics-hold " + std::to_string(hold_seconds) +
                     ": must be a number of seconds >= 0");
  }
  if (!std::isfinite(push_timeout_seconds) || push_timeout_seconds <= 0) {
    throw InputError("metrics push timeout must be > 0 seconds");
  }
  if (http_threads < 1) throw InputError("metrics HTTP threads must be >= 1");
  if (http_request_timeout_ms < 1) throw InputError("metrics HTTP request timeout must be >= 1 ms");
  if (push_job.empty()) throw InputError("metrics push job name must not be empty");
}

void validate(const MetricsOptions& options) { options.validate(); }

void check_listen_address_free(const MetricsOptions& options) {
  if (options.listen_addr.empty()) return;
  const ListenAddress addr = parse_listen_address(options.listen_addr);
  if (addr.port == 0) return;  // the kernel picks a free port
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;  // cannot check; binding will tell
  // Same socket options as the HTTP server, so a port in TIME_WAIT passes here as it does there.
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(addr.port));
  ::inet_pton(AF_INET, addr.host.c_str(), &sa.sin_addr);
  int err = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 1) != 0) {
    err = errno;
  }
  ::close(fd);
  if (err != 0) {
    throw InputError("--metrics-addr " + options.listen_addr + ": cannot listen on " + addr.host +
                     ":" + std::to_string(addr.port) + ": " + std::strerror(err) +
                     (err == EADDRINUSE ? " (another process, or a second run, uses this port; "
                                          "pick another PORT)"
                                        : ""));
  }
}

bool metrics_requested(const MetricsOptions& options) {
  return !options.listen_addr.empty() || !options.pushgateway_url.empty();
}

}  // namespace recompdiag::reports
