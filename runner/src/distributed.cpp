#include "recompdiag/runner/distributed.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "recompdiag/core/error.h"

namespace recompdiag::runner {

namespace {

/// Parses a whole decimal integer; nullopt on anything else (sign, spaces, overflow).
std::optional<int64_t> parse_int(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

bool host_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      if (label == 0 || label > 63) return false;
      label = 0;
      continue;
    }
    const char c = name[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    ++label;
  }
  return true;
}

void check_timeout(double seconds, const char* flag) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    throw InputError(std::string(flag) + " must be in (0, 86400] seconds");
  }
}

}  // namespace

void DistributedOptions::validate() const {
  if (world_size < 1 || world_size > kMaxWorldSize) {
    throw InputError("world size " + std::to_string(world_size) + " is outside [1, " +
                     std::to_string(kMaxWorldSize) + "]");
  }
  if (rank < 0 || rank >= world_size) {
    throw InputError("rank " + std::to_string(rank) + " is outside [0, " +
                     std::to_string(world_size - 1) + "] for world size " +
                     std::to_string(world_size));
  }
  check_master_addr(master_addr, "master address");
  if (master_port < 1 || master_port > 65535) {
    throw InputError("master port " + std::to_string(master_port) + " is outside [1, 65535]");
  }
  check_timeout(rendezvous_timeout_s, "--rendezvous-timeout");
  check_timeout(collective_timeout_s, "--collective-timeout");
  if (backend != "gloo" && backend != "nccl") {
    throw InputError("--dist-backend must be gloo or nccl, got '" + backend + "'");
  }
}

bool DistributedOptions::loopback() const {
  return master_addr == "localhost" || master_addr.rfind("127.", 0) == 0 || master_addr == "::1" ||
         master_addr == "[::1]";
}

void check_master_addr(const std::string& addr, const std::string& what) {
  std::string bare = addr;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  unsigned char buf[16];
  if (::inet_pton(AF_INET6, bare.c_str(), buf) == 1) return;
  if (addr.find_first_not_of("0123456789.") == std::string::npos) {
    // All digits and dots: it must be a dotted quad, not a host name.
    if (::inet_pton(AF_INET, addr.c_str(), buf) == 1) return;
    throw InputError(what + " '" + addr + "' is not a valid IPv4 address");
  }
  if (host_name_ok(addr)) return;
  throw InputError(what + " '" + addr +
                   "' is not an IP address or a host name (no port, scheme or spaces)");
}

std::optional<DistributedOptions> distributed_from_environment(
    const std::function<const char*(const char*)>& getenv) {
  const char* rank = getenv("RANK");
  const char* world = getenv("WORLD_SIZE");
  const char* addr = getenv("MASTER_ADDR");
  const char* port = getenv("MASTER_PORT");
  const char* file = getenv(kRendezvousFileVar);
  if (!rank && !world && !addr && !port && !file) return std::nullopt;
  if (!rank || !world) {
    throw InputError(std::string("a launcher's environment needs RANK and WORLD_SIZE; ") +
                     (rank ? "WORLD_SIZE" : "RANK") + " is not set");
  }
  DistributedOptions o;
  auto number = [](const char* name, const char* text, int64_t lo, int64_t hi) {
    const std::optional<int64_t> v = parse_int(text);
    if (!v) throw InputError(std::string(name) + "='" + text + "' is not a whole number");
    if (*v < lo || *v > hi) {
      throw InputError(std::string(name) + "=" + text + " is outside [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
    }
    return static_cast<int>(*v);
  };
  o.world_size = number("WORLD_SIZE", world, 1, kMaxWorldSize);
  o.rank = number("RANK", rank, 0, o.world_size - 1);
  if (addr) {
    check_master_addr(addr, "MASTER_ADDR");
    o.master_addr = addr;
  }
  if (port) o.master_port = number("MASTER_PORT", port, 1, 65535);
  if (file) {
    if (*file == '\0') throw InputError(std::string(kRendezvousFileVar) + " is empty");
    o.store_file = file;
  }
  // Which interface Gloo binds: a host whose name resolves to no address of this network (a
  // container, a network namespace) names it, as for PyTorch.
  if (const char* ifname = getenv("GLOO_SOCKET_IFNAME")) o.socket_ifname = ifname;
  return o;
}

}  // namespace recompdiag::runner
