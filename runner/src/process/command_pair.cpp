#include "process/command_pair.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/turn_channel.h"

namespace recompdiag::runner::detail {

namespace {

using Clock = std::chrono::steady_clock;

/// How often the parent looks at the sides between turns (and how late it notices an end).
constexpr int kPollMs = 50;
/// How long a stopped side has between SIGTERM (its training stops after the step in flight) and
/// SIGKILL.
constexpr auto kStopGrace = std::chrono::seconds(5);

/// One side of the pair, as the parent sees it.
struct Side {
  pid_t pid = -1;
  /// The parent writes a byte: the side's turn. The parent keeps the read end as well, to see
  /// whether the side ever reads its turn (FIONREAD); holding it changes nothing for the side.
  Pipe go;
  /// The side writes a byte: it passes the turn. End of file: its channel is closed.
  Pipe done;
  bool ended = false;
  Clock::time_point ended_at;
  CommandOutcome outcome;
  /// A turn has been waiting unread in `go` since `unread_since`.
  bool unread = false;
  Clock::time_point unread_since;
  Clock::time_point stopped_at;
  bool killed = false;

  bool channel_open() const { return done.read.open(); }
};

/// The environment of this process without a turn channel or a quiet request of its own, plus
/// `turns`, and RECOMPDIAG_QUIET_ALERTS=1 when `quiet`.
std::vector<std::string> command_environment(const TurnChannelSpec& turns, bool quiet) {
  const std::string prefix = std::string(kTurnChannelVar) + "=";
  const std::string quiet_prefix = std::string(kQuietAlertsVar) + "=";
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0 &&
        std::strncmp(*e, quiet_prefix.c_str(), quiet_prefix.size()) != 0) {
      env.emplace_back(*e);
    }
  }
  env.push_back(prefix + turns.to_string());
  if (quiet) env.push_back(quiet_prefix + "1");
  return env;
}

/// Starts `/bin/sh -c command` in a process group of its own, with the side's two channel ends
/// inherited (spawn_process).
void start_side(Side& side, const std::string& command, const std::string& label,
                const CommandPairOptions& options, ForwardSignals& forward) {
  TurnChannelSpec spec;
  spec.read_fd = side.go.read.get();
  spec.write_fd = side.done.write.get();
  spec.every_steps = options.every_steps;
  spec.timeout_ms = options.timeout_ms;
  ChildProgram program;
  program.path = "/bin/sh";
  program.argv = {"sh", "-c", command};
  program.env = command_environment(spec, options.quiet);
  program.inherit = {spec.read_fd, spec.write_fd};  // these two, alone of the pipes
  program.cpus = CpuMask::of(options.cpus);
  program.default_sigpipe = true;
  program.exec_failed_line = "recompdiag: error: cannot start a command: exec of /bin/sh failed\n";
  // A group of its own: a terminal's Ctrl-C reaches ab alone, which forwards it to the group (the
  // shell and what it started) once.
  const pid_t pid = spawn_process(program, "the " + label + " run");
  side.pid = pid;
  forward.add(-pid);
  side.done.write.reset();  // the side's alone: its end of file is the parent's to see
  ::fcntl(side.go.write.get(), F_SETFL, ::fcntl(side.go.write.get(), F_GETFL) | O_NONBLOCK);
}

/// Gives `side` the turn (a byte it reads), unless its channel is over.
void give_turn(Side& side) {
  if (!side.go.write.open()) return;
  // A full pipe (a side that never reads 64 KiB of turns) is not waited on: that side is judged
  // by its unread turns anyway.
  write_turn_token(side.go.write.get());
}

/// `side`'s channel is over (it closed it, or it ended): the other side runs on alone, its next
/// wait reading end of file once it has read the turns already given.
void end_channel(Side& side, Side& other) {
  side.done.read.reset();
  side.go.write.reset();
  other.go.write.reset();
}

/// Reads what `side` wrote: a passed turn goes to the other side; end of file ends the channel.
void relay(Side& side, Side& other) {
  char buf[64];
  const ssize_t n = ::read(side.done.read.get(), buf, sizeof buf);
  if (n > 0) {
    give_turn(other);
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    end_channel(side, other);
  }
}

/// Waits up to kPollMs for a passed turn from either side and relays it.
void relay_turns(Side (&sides)[2]) {
  pollfd fds[2];
  int which[2];
  nfds_t n = 0;
  for (int i = 0; i < 2; ++i) {
    if (!sides[i].channel_open()) continue;
    fds[n] = {sides[i].done.read.get(), POLLIN, 0};
    which[n++] = i;
  }
  if (::poll(n > 0 ? fds : nullptr, n, kPollMs) <= 0) return;  // EINTR: a forwarded signal
  for (nfds_t k = 0; k < n; ++k) {
    const int i = which[k];
    if (fds[k].revents != 0 && sides[i].channel_open()) relay(sides[i], sides[1 - i]);
  }
}

/// Notes a side that has ended (without blocking) and closes its channel.
void reap(Side& side, Side& other, ForwardSignals& forward) {
  if (side.ended) return;
  int status = 0;
  const pid_t r = ::waitpid(side.pid, &status, WNOHANG);
  if (r != side.pid) return;
  side.ended = true;
  side.ended_at = Clock::now();
  side.outcome.wait_status = status;
  forward.remove(-side.pid);
  end_channel(side, other);
  side.go.read.reset();
}

/// Stops `side` when the other has ended and a turn has sat unread in its channel for the
/// timeout: it holds the channel but takes no turns, and nothing else would end it.
void stop_if_never_reads(Side& side, const Side& other, const CommandPairOptions& options) {
  if (side.ended) return;
  const Clock::time_point now = Clock::now();
  if (side.outcome.stopped) {
    if (!side.killed && now - side.stopped_at >= kStopGrace) {
      ::kill(-side.pid, SIGKILL);
      side.killed = true;
    }
    return;
  }
  int unread = 0;
  if (!side.channel_open() || ::ioctl(side.go.read.get(), FIONREAD, &unread) != 0) unread = 0;
  if (unread == 0) {
    side.unread = false;
    return;
  }
  if (!side.unread) {
    side.unread = true;
    side.unread_since = now;
  }
  if (!other.ended) return;
  if (now - std::max(side.unread_since, other.ended_at) <
      std::chrono::milliseconds(options.timeout_ms)) {
    return;
  }
  ::kill(-side.pid, SIGTERM);
  side.outcome.stopped = true;
  side.stopped_at = now;
}

// A side has started when its process group has used no CPU for this long: it waits for its
// first turn (or has ended). A tick is 10 ms; start-up (an interpreter's imports, a library's
// loading) uses CPU all the while.
constexpr auto kIdleToStart = std::chrono::milliseconds(300);
constexpr auto kStartPoll = std::chrono::milliseconds(50);

/// Waits until both sides have started (kIdleToStart without CPU, or ended), at most `wait_ms`, a
/// forwarded signal ending the wait. Returns whether both had.
bool wait_for_start(Side (&sides)[2], int64_t wait_ms, ForwardSignals& forward) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  int64_t ticks[2] = {-1, -1};
  Clock::time_point still_since[2];
  for (;;) {
    const Clock::time_point now = Clock::now();
    bool started = true;
    for (int i = 0; i < 2; ++i) {
      reap(sides[i], sides[1 - i], forward);
      if (sides[i].ended) continue;
      const int64_t t = process_group_cpu_ticks(sides[i].pid);
      if (t != ticks[i]) {
        ticks[i] = t;
        still_since[i] = now;
      }
      started = started && now - still_since[i] >= kIdleToStart;
    }
    if (started) return true;
    if (now >= deadline || forward.signal() != 0) return false;
    std::this_thread::sleep_for(kStartPoll);
  }
}

}  // namespace

void CommandPairOptions::validate() const {
  for (int i = 0; i < 2; ++i) {
    if (commands[i].empty()) {
      throw InputError("CommandPairOptions::commands[" + std::to_string(i) + "] is empty");
    }
  }
  if (first != 0 && first != 1) {
    throw InputError("CommandPairOptions::first must be 0 or 1, got " + std::to_string(first));
  }
  require_at_least("CommandPairOptions::start_wait_ms", start_wait_ms, 0);
  require_at_least("CommandPairOptions::timeout_ms", timeout_ms, 0);
  require_at_least("CommandPairOptions::every_steps", every_steps, 0);
  for (const int cpu : cpus) require_at_least("CommandPairOptions::cpus[i]", cpu, 0);
}

std::array<CommandOutcome, 2> run_command_pair(const CommandPairOptions& options,
                                               ForwardSignals& forward, PairStart* start) {
  options.validate();
  Side sides[2];
  for (Side& s : sides) {
    s.go = Pipe::make("the turns");
    s.done = Pipe::make("the turns");
  }
  for (int i = 0; i < 2; ++i) {
    try {
      start_side(sides[i], options.commands[i], options.labels[i], options, forward);
    } catch (...) {
      for (int j = 0; j < i; ++j) {  // not left running behind the error
        ::kill(-sides[j].pid, SIGKILL);
        while (::waitpid(sides[j].pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        forward.remove(-sides[j].pid);
      }
      throw;
    }
  }
  const Clock::time_point began = Clock::now();
  const bool together =
      options.start_wait_ms > 0 && wait_for_start(sides, options.start_wait_ms, forward);
  if (start) {
    start->wait_s = std::chrono::duration<double>(Clock::now() - began).count();
    start->together = together;
  }
  give_turn(sides[options.first]);
  while (!(sides[0].ended && sides[1].ended)) {
    relay_turns(sides);
    for (int i = 0; i < 2; ++i) reap(sides[i], sides[1 - i], forward);
    for (int i = 0; i < 2; ++i) stop_if_never_reads(sides[i], sides[1 - i], options);
  }
  return {sides[0].outcome, sides[1].outcome};
}

}  // namespace recompdiag::runner::detail
