#include "recompdiag/core/turn_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kFormat[] = "<read_fd>,<write_fd>[,every=N][,timeout_ms=T]";

[[noreturn]] void bad_value(const std::string& value, const std::string& problem) {
  throw InputError(std::string(kTurnChannelVar) + "='" + value + "': " + problem + "; expected " +
                   kFormat);
}

/// A whole non-negative decimal number, or nullopt-like -1.
int64_t parse_count(const std::string& text) {
  int64_t v = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0) return -1;
  return v;
}

std::vector<std::string> split(const std::string& value, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = value.find(sep, start)) != std::string::npos; start = pos + 1) {
    parts.push_back(value.substr(start, pos - start));
  }
  parts.push_back(value.substr(start));
  return parts;
}

int parse_fd(const std::string& value, const std::string& text, const char* which) {
  const int64_t fd = parse_count(text);
  if (fd < 0 || fd > 1 << 20)
    bad_value(value, std::string(which) + " '" + text + "' is not a descriptor");
  return static_cast<int>(fd);
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

/// Milliseconds left until `deadline`, rounded up, for poll().
int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

/// Waits until `fd` has `events` (or an error or hang-up), at most until `deadline`; false on
/// timeout. Signals do not end the wait.
bool poll_until(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, ms_until(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return true;  // let the read or write that follows report it
  }
}

}  // namespace

bool write_turn_token(int fd) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t old;
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const char byte = 1;
  ssize_t n;
  while ((n = ::write(fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n < 0 && errno == EPIPE && !was_pending) {
    // Ours: take it off the pending set before unblocking.
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return n == 1;
}

std::string TurnChannelSpec::to_string() const {
  return std::to_string(read_fd) + "," + std::to_string(write_fd) +
         ",every=" + std::to_string(every_steps) + ",timeout_ms=" + std::to_string(timeout_ms);
}

bool quiet_alerts_from_environment() {
  const char* value = std::getenv(kQuietAlertsVar);
  return value != nullptr && std::string(value) == "1";
}

TurnChannelSpec TurnChannelSpec::parse(const std::string& value) {
  const std::vector<std::string> parts = split(value, ',');
  if (parts.size() < 2) bad_value(value, "two descriptors needed");
  TurnChannelSpec spec;
  spec.read_fd = parse_fd(value, parts[0], "read end");
  spec.write_fd = parse_fd(value, parts[1], "write end");
  if (spec.read_fd == spec.write_fd) bad_value(value, "the two ends are the same descriptor");
  bool seen_every = false, seen_timeout = false;
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    const int64_t v = eq == std::string::npos ? -1 : parse_count(part.substr(eq + 1));
    if (key == "every" && !seen_every) {
      if (v < 0) bad_value(value, "every= takes a step count >= 0");
      spec.every_steps = v;
      seen_every = true;
    } else if (key == "timeout_ms" && !seen_timeout) {
      if (v <= 0) bad_value(value, "timeout_ms= takes milliseconds > 0");
      spec.timeout_ms = v;
      seen_timeout = true;
    } else {
      bad_value(value, "unknown or repeated field '" + part + "'");
    }
  }
  return spec;
}

TurnChannel::TurnChannel(const TurnChannelSpec& spec, std::ostream& log) : spec_(spec), log_(log) {
  for (int fd : {spec.read_fd, spec.write_fd}) {
    if (fd < 0 || !is_open(fd)) {
      throw InputError(std::string(kTurnChannelVar) + ": descriptor " + std::to_string(fd) +
                       " is not open (set by hand, or closed by a process between ab and the "
                       "trainer)");
    }
  }
  if (spec.timeout_ms <= 0) throw InputError("a turn channel's timeout_ms must be > 0");
  read_fd_ = spec.read_fd;
  write_fd_ = spec.write_fd;
  for (int fd : {read_fd_, write_fd_}) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

TurnChannel::TurnChannel(const TurnChannelSpec& spec) : TurnChannel(spec, std::cerr) {}

TurnChannel::~TurnChannel() { close_fds(); }

std::unique_ptr<TurnChannel> TurnChannel::from_environment() {
  const char* value = std::getenv(kTurnChannelVar);
  if (value == nullptr || *value == '\0') return nullptr;
  return std::make_unique<TurnChannel>(TurnChannelSpec::parse(value));
}

TurnWait TurnChannel::wait_turn() {
  if (read_fd_ < 0) return TurnWait::kNotTaking;
  if (!first_) pass_turn();
  first_ = false;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(spec_.timeout_ms);
  for (;;) {
    if (!poll_until(read_fd_, POLLIN, deadline)) {
      timed_out_ = true;
      log_ << "recompdiag: warning: " << timeout_message() << std::endl;
      close_fds();  // the peer (or ab) sees end of file: it runs on alone
      return TurnWait::kTimedOut;
    }
    char byte;
    const ssize_t n = ::read(read_fd_, &byte, 1);
    if (n == 1) {
      ++turns_;
      return TurnWait::kTurn;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    close_fds();  // end of file (or a broken descriptor): the peer is gone
    return TurnWait::kPeerGone;
  }
}

void TurnChannel::pass_turn() {
  if (write_fd_ < 0) return;
  // A pipe with no room (a peer that never reads 64 KiB of turns) is given up on, not waited on.
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(spec_.timeout_ms);
  if (!poll_until(write_fd_, POLLOUT, deadline)) return;
  write_turn_token(write_fd_);
}

std::string TurnChannel::timeout_message() const {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(spec_.timeout_ms) / 1000.0);
  return std::string("no turn from the other run within ") + seconds + " s (" + kTurnChannelVar +
         " timeout_ms); training on without taking turns";
}

EventRecord TurnChannel::timeout_event(int64_t step, int phase) const {
  EventRecord event;
  event.kind = EventKind::kNote;
  event.step = step;
  event.phase = phase;
  event.reason = timeout_message();
  event.detail = {{"turns", "timed_out"}, {"timeout_ms", spec_.timeout_ms}};
  return event;
}

void TurnChannel::close_fds() {
  for (int* fd : {&read_fd_, &write_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

}  // namespace recompdiag
