// The turn channel (turn_channel.h) on real pipes: turns, a gone peer, a silent peer, a reader
// that is gone, and every malformed RECOMPDIAG_TURNS value.

#include "recompdiag/core/turn_channel.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>

#include "input_error.h"

namespace {

using namespace recompdiag;
using Clock = std::chrono::steady_clock;

/// Two pipes, as `ab` hands them to one side: `mine` carries turns to it, `theirs` from it.
struct PipePair {
  int mine[2] = {-1, -1};
  int theirs[2] = {-1, -1};
  PipePair() {
    REQUIRE(::pipe(mine) == 0);
    REQUIRE(::pipe(theirs) == 0);
  }
  ~PipePair() {
    for (int fd : {mine[0], mine[1], theirs[0], theirs[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
  /// The side's spec; the channel takes ownership of mine[0] and theirs[1].
  TurnChannelSpec take(int64_t timeout_ms) {
    TurnChannelSpec spec;
    spec.read_fd = mine[0];
    spec.write_fd = theirs[1];
    spec.timeout_ms = timeout_ms;
    mine[0] = theirs[1] = -1;
    return spec;
  }
  void give_turn() const {
    const char byte = 1;
    REQUIRE(::write(mine[1], &byte, 1) == 1);
  }
  /// Bytes the side passed (read without blocking).
  int passed() const {
    ::fcntl(theirs[0], F_SETFL, O_NONBLOCK);
    char buf[16];
    const ssize_t n = ::read(theirs[0], buf, sizeof buf);
    return n > 0 ? static_cast<int>(n) : 0;
  }
  /// Whether the side's end of `theirs` is closed (end of file after what it passed).
  bool side_closed() const {
    pollfd p{theirs[0], POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return false;
    char byte;
    return ::read(theirs[0], &byte, 1) == 0;
  }
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

TEST_CASE("turn channel: the first wait takes the turn; later waits pass it first") {
  PipePair p;
  std::ostringstream log;
  TurnChannel channel(p.take(10000), log);
  p.give_turn();
  CHECK(channel.wait_turn() == TurnWait::kTurn);
  CHECK(p.passed() == 0);  // the first wait passes nothing
  p.give_turn();           // the peer's turn already came back
  CHECK(channel.wait_turn() == TurnWait::kTurn);
  CHECK(p.passed() == 1);
  CHECK(channel.turns() == 2);
  CHECK(channel.taking_turns());
  CHECK(log.str().empty());
}

TEST_CASE("turn channel: a peer that is gone ends the wait at once, and every later one") {
  PipePair p;
  std::ostringstream log;
  TurnChannel channel(p.take(30000), log);
  ::close(p.mine[1]);  // the peer exited: its write end is closed
  p.mine[1] = -1;
  const Clock::time_point start = Clock::now();
  CHECK(channel.wait_turn() == TurnWait::kPeerGone);
  CHECK(channel.wait_turn() == TurnWait::kNotTaking);
  CHECK(seconds_since(start) < 5.0);  // not the 30 s timeout
  CHECK_FALSE(channel.taking_turns());
  CHECK_FALSE(channel.timed_out());
  CHECK(log.str().empty());
  CHECK(p.side_closed());
}

TEST_CASE("turn channel: a peer that never yields is given up on once, said once") {
  PipePair p;
  std::ostringstream log;
  TurnChannel channel(p.take(200), log);
  p.give_turn();
  CHECK(channel.wait_turn() == TurnWait::kTurn);
  const Clock::time_point start = Clock::now();
  CHECK(channel.wait_turn() == TurnWait::kTimedOut);  // passed, then nothing came back
  CHECK(seconds_since(start) >= 0.15);
  CHECK(seconds_since(start) < 10.0);
  CHECK(channel.wait_turn() == TurnWait::kNotTaking);
  CHECK(channel.timed_out());
  CHECK_FALSE(channel.taking_turns());
  CHECK(p.passed() == 1);
  CHECK(p.side_closed());  // the peer (or ab) sees that this side takes no more turns
  const std::string said = log.str();
  CHECK(said.find("recompdiag: warning: no turn from the other run within 0.2 s") == 0);
  CHECK(said.find('\n') == said.size() - 1);  // one line

  const EventRecord event = channel.timeout_event(40, 2);
  CHECK(event.kind == EventKind::kNote);
  CHECK(event.step == 40);
  CHECK(event.phase == 2);
  CHECK(event.detail["turns"] == "timed_out");
  CHECK(event.detail["timeout_ms"] == 200);
}

TEST_CASE("turn channel: passing to a reader that is gone costs nothing (no SIGPIPE)") {
  PipePair p;
  std::ostringstream log;
  TurnChannel channel(p.take(200), log);
  ::close(p.theirs[0]);
  p.theirs[0] = -1;
  channel.pass_turn();  // SIGPIPE's default action would end the test process here
  p.give_turn();
  CHECK(channel.wait_turn() == TurnWait::kTurn);
}

TEST_CASE("turn channel: the descriptors are close-on-exec and closed on destruction") {
  PipePair p;
  const TurnChannelSpec spec = p.take(1000);
  {
    TurnChannel channel(spec);
    CHECK((::fcntl(spec.read_fd, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(spec.write_fd, F_GETFD) & FD_CLOEXEC) != 0);
  }
  CHECK(::fcntl(spec.read_fd, F_GETFD) == -1);
  CHECK(p.side_closed());
}

TEST_CASE("turn channel spec: the variable's value, parsed and written") {
  const TurnChannelSpec spec = TurnChannelSpec::parse("5,8");
  CHECK(spec.read_fd == 5);
  CHECK(spec.write_fd == 8);
  CHECK(spec.every_steps == 0);
  CHECK(spec.timeout_ms == kDefaultTurnTimeoutMs);
  const TurnChannelSpec full = TurnChannelSpec::parse("3,4,timeout_ms=2000,every=7");
  CHECK(full.every_steps == 7);
  CHECK(full.timeout_ms == 2000);
  const TurnChannelSpec again = TurnChannelSpec::parse(full.to_string());
  CHECK(again.read_fd == 3);
  CHECK(again.write_fd == 4);
  CHECK(again.every_steps == 7);
  CHECK(again.timeout_ms == 2000);
}

TEST_CASE("quiet alerts from the environment: RECOMPDIAG_QUIET_ALERTS=1, nothing else") {
  ::unsetenv(kQuietAlertsVar);
  CHECK_FALSE(quiet_alerts_from_environment());
  ::setenv(kQuietAlertsVar, "0", 1);
  CHECK_FALSE(quiet_alerts_from_environment());
  ::setenv(kQuietAlertsVar, "1", 1);
  CHECK(quiet_alerts_from_environment());
  ::unsetenv(kQuietAlertsVar);
}

TEST_CASE("turn channel spec: a malformed value is one line naming the variable") {
  for (const char* bad :
       {"", "5", "x,8", "5,-1", "5,5", "5,8,every=-2", "5,8,every=", "5,8,timeout_ms=0",
        "5,8,timeout_ms=1e3", "5,8,speed=3", "5,8,every", "5,8,every=1,every=2", "5, 8",
        "99999999999999999999,1", "5,8,quiet,quiet", "5,8,quiet=1"}) {
    CAPTURE(bad);
    const std::string what = test::input_error([&] { TurnChannelSpec::parse(bad); });
    CHECK(what.rfind("RECOMPDIAG_TURNS='", 0) == 0);
    CHECK(what.find("expected <read_fd>,<write_fd>") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("turn channel from the environment: unset, malformed, descriptors not open") {
  ::unsetenv(kTurnChannelVar);
  CHECK(TurnChannel::from_environment() == nullptr);
  ::setenv(kTurnChannelVar, "", 1);
  CHECK(TurnChannel::from_environment() == nullptr);
  ::setenv(kTurnChannelVar, "3;4", 1);
  CHECK(test::input_error([] { TurnChannel::from_environment(); }).rfind("RECOMPDIAG_TURNS=", 0) ==
        0);
  ::setenv(kTurnChannelVar, "1000001,1000002", 1);
  const std::string what = test::input_error([] { TurnChannel::from_environment(); });
  CHECK(what.find("descriptor 1000001 is not open") != std::string::npos);
  CHECK(what.find('\n') == std::string::npos);

  PipePair p;
  const TurnChannelSpec spec = p.take(500);
  ::setenv(kTurnChannelVar, spec.to_string().c_str(), 1);
  std::unique_ptr<TurnChannel> channel = TurnChannel::from_environment();
  ::unsetenv(kTurnChannelVar);
  REQUIRE(channel != nullptr);
  CHECK(channel->spec().timeout_ms == 500);
  p.give_turn();
  CHECK(channel->wait_turn() == TurnWait::kTurn);
}
