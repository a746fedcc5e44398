#pragma once
/// \file
/// Turns between two training processes that share a machine: a one-byte token on a pair of pipe
/// file descriptors, handed over in the environment variable RECOMPDIAG_TURNS by `recompdiag ab
/// --a-cmd ... --b-cmd ...`. Each side runs an epoch (or N steps) while the other waits, so a
/// machine that speeds up or slows down affects both alike. A peer that is gone or never yields
/// cannot hang the other: a gone peer (end of file) ends the waiting at once, a silent one after a
/// timeout. Plain OS plumbing, no LibTorch: the Monitor, the trainer and the `ab` parent share it.
///
///     std::unique_ptr<recompdiag::TurnChannel> turns = recompdiag::TurnChannel::from_environment();
///     for (int epoch = 0; epoch < epochs; ++epoch) {
///       if (turns) turns->wait_turn();  // outside the step timing
///       // train one epoch
///     }

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "recompdiag/core/record.h"

namespace recompdiag {

/// The environment variable that hands a turn channel to a trainer.
inline constexpr char kTurnChannelVar[] = "RECOMPDIAG_TURNS";
/// How long wait_turn() waits for a peer that never yields, by default: 5 minutes (an epoch of
/// the other side must take less).
inline constexpr int64_t kDefaultTurnTimeoutMs = 300000;

/// The variable by which `recompdiag ab --quiet` asks its sides' Monitors for no alert lines
/// ("1"); its own variable, not a field of RECOMPDIAG_TURNS, whose parser in a Monitor of 0.6 or
/// before refuses a field it does not know (the side would not start).
inline constexpr char kQuietAlertsVar[] = "RECOMPDIAG_QUIET_ALERTS";

/// Whether this process's environment asks for no alert lines (kQuietAlertsVar is "1").
bool quiet_alerts_from_environment();

/// What RECOMPDIAG_TURNS holds: `<read_fd>,<write_fd>[,every=N][,timeout_ms=T]`, e.g.
/// `5,8,timeout_ms=2000`. Plain data.
struct TurnChannelSpec {
  /// Readable end: one byte arrives when it is this side's turn; end of file when the peer is gone.
  int read_fd = -1;
  /// Writable end: one byte passes the turn to the peer.
  int write_fd = -1;
  /// Steps per turn for trainers that never call Monitor::take_turn() (Monitor::begin_step takes
  /// a turn every N steps); 0: turns at the trainer's epoch boundaries only.
  int64_t every_steps = 0;
  /// How long one wait_turn() waits for the peer, in ms (> 0).
  int64_t timeout_ms = kDefaultTurnTimeoutMs;

  /// The variable's value ("5,8,every=0,timeout_ms=300000").
  std::string to_string() const;
  /// Parses a value. Throws InputError with one line naming the variable and what is wrong.
  static TurnChannelSpec parse(const std::string& value);
};

/// Writes the one-byte turn token to `fd`: retried when a signal interrupts it, with SIGPIPE
/// blocked so that a reader that is gone costs EPIPE only (the process's own SIGPIPE disposition
/// stays as it is). False when no byte was written (the reader is gone, or a non-blocking pipe is
/// full). The one writer of the token: TurnChannel, and `ab` giving a side its turn.
bool write_turn_token(int fd);

/// How a wait_turn() ended.
enum class TurnWait {
  kTurn,       ///< The peer passed the turn.
  kPeerGone,   ///< The peer's end is closed (it finished, crashed, or gave up): no more waiting.
  kTimedOut,   ///< No turn within the timeout: this side takes no more turns (returned once).
  kNotTaking,  ///< Turns ended earlier (peer gone or timed out): returned at once.
};

/// One side of a turn channel. Owns its two file descriptors (closed on destruction, and as soon as
/// turns end, so that the peer sees end of file and runs on alone). Not thread-safe: call from
/// the training thread. Neither copyable nor movable.
class TurnChannel {
 public:
  /// Takes ownership of `spec`'s descriptors and marks them close-on-exec (what this process
  /// starts must not keep the peer from seeing it end). Throws InputError when either is not an
  /// open descriptor. `log` (not owned, must outlive this) gets the one line said on a timeout.
  explicit TurnChannel(const TurnChannelSpec& spec, std::ostream& log);
  /// As above, logging to std::cerr.
  explicit TurnChannel(const TurnChannelSpec& spec);
  ~TurnChannel();
  TurnChannel(const TurnChannel&) = delete;
  TurnChannel& operator=(const TurnChannel&) = delete;
  TurnChannel(TurnChannel&&) = delete;
  TurnChannel& operator=(TurnChannel&&) = delete;

  /// The channel RECOMPDIAG_TURNS hands over, or null when it is unset or empty. The one place
  /// that reads the variable. Throws InputError (one line) when its value is malformed or names a
  /// descriptor that is not open.
  static std::unique_ptr<TurnChannel> from_environment();

  /// Waits for this side's turn: from the second call on it first passes the turn (the previous
  /// turn is over), then blocks until the peer passes it back, the peer is gone, or timeout_ms
  /// passes. On a timeout it says so once on `log`, closes its descriptors and takes no more
  /// turns. Signals do not end the wait early.
  TurnWait wait_turn();
  /// Passes the turn to the peer without waiting for it back. Never blocks for longer than
  /// timeout_ms; a gone peer is ignored (no SIGPIPE).
  void pass_turn();

  /// Whether turns are still taken (not after the peer is gone or a timeout).
  bool taking_turns() const { return read_fd_ >= 0; }
  /// Whether a wait timed out.
  bool timed_out() const { return timed_out_; }
  /// Turns taken so far (kTurn results).
  int64_t turns() const { return turns_; }
  const TurnChannelSpec& spec() const { return spec_; }
  /// The sentence logged on a timeout ("no turn from the other run within 2.0 s; ...").
  std::string timeout_message() const;
  /// The run file's note of a timeout at `step` of `phase`: kNote, the timeout message, detail
  /// {"turns": "timed_out", "timeout_ms": T}.
  EventRecord timeout_event(int64_t step, int phase) const;

 private:
  void close_fds();

  TurnChannelSpec spec_;
  std::ostream& log_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  bool first_ = true;
  bool timed_out_ = false;
  int64_t turns_ = 0;
};

}  // namespace recompdiag
