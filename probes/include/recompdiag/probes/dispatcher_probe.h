#pragma once
/// \file
/// The dispatcher probe: counts, per step, the top-level ATen ops by device, host ops,
/// cross-device copies, host syncs and first-seen op signatures, through a LibTorch RecordFunction
/// observer or a dispatcher fallback on a mode key.

#include <cstdint>
#include <memory>
#include <string>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/dispatch_hook.h"

namespace recompdiag::probes {

namespace detail {
struct DispatchState;  // what the callbacks write into; private to the probe
}  // namespace detail

/// Name of the RecordFunction user scope inside which host syncs are the recorder's own
/// (`RECORD_USER_SCOPE("recompdiag::recorder_read")` around the loss read): they count in
/// `DispatchStats::recorder_syncs`, not in `syncs`. Seen by the RecordFunction hook only; a
/// RecorderRead marks a read for both hooks.
inline constexpr const char kRecorderReadScope[] = "recompdiag::recorder_read";

/// Marks the recorder's own reads on this thread while it lives: host syncs inside count in
/// `DispatchStats::recorder_syncs`, with either hook. Nests; put it beside (or instead of) the
/// `RECORD_USER_SCOPE(kRecorderReadScope)`, which other tools' traces show.
class RecorderRead {
 public:
  RecorderRead();
  ~RecorderRead();
  RecorderRead(const RecorderRead&) = delete;
  RecorderRead& operator=(const RecorderRead&) = delete;
  RecorderRead(RecorderRead&&) = delete;
  RecorderRead& operator=(RecorderRead&&) = delete;
};

/// Options of the dispatcher probe.
struct DispatcherOptions {
  /// Device the model is meant to train on ("cpu", "cuda", "cuda:1"): ops on the host count as
  /// host ops when this names CUDA.
  std::string expected_device = "cpu";
  /// Observe every Nth step only (1: every step). Unsampled steps cost nothing and report
  /// `sampled = false` with zero counters.
  int64_t sample_every = 1;
  /// On unsampled steps, still count ops, host syncs and the recorder's syncs, by op name alone:
  /// a callback that needs no op inputs, so LibTorch boxes no arguments for it (`counted = true`,
  /// `sampled = false`; the device split, copies and signatures stay absent).
  bool count_unsampled = false;
  /// Hash first-seen (op, dtypes, shapes, device) signatures. Needs the op inputs either way.
  bool signatures = true;
  /// Slots of the fixed signature table (rounded up to a power of two, filled to 3/4).
  int64_t signature_capacity = 1 << 15;
  /// How ops are seen (see DispatchHook). kAuto is the mode key here, or the RecordFunction
  /// callback when another library holds the mode key's keys: a probe knows nothing of
  /// torch.compile, and a Monitor with `compiled` on asks for the callback itself.
  DispatchHook hook = kDefaultDispatchHook;

  /// Throws InputError naming the field for an empty device, a `sample_every` or a
  /// `signature_capacity` below 1. DispatcherProbe's constructor calls it.
  void validate() const;
};

/// Counts ops through its hook (DispatcherOptions::hook): on sampled steps reading op inputs, on
/// the others, when `count_unsampled` is set, by op name alone. With the RecordFunction hook these
/// are two global callbacks (scopes FUNCTION and USER_SCOPE), at most one registered at a time.
///
/// Only one dispatcher probe can be active in a process (the hooks are plain function pointers);
/// a second one reports unavailable. The hook observes between `begin_step` and `end_step` of
/// observed steps only. It does no heap allocation, takes no lock and writes relaxed atomics (ops
/// of the autograd engine's threads count too); ops it cannot classify (a signature table full)
/// are counted in `dropped`.
///
/// Methods are not thread-safe: call them from the training thread (with the mode key, begin_step
/// and end_step of a step from the same thread). Neither copyable nor movable; the destructor
/// removes the callback, or the mode key from the calling thread.
class DispatcherProbe {
 public:
  /// Throws InputError when `options.validate()` does (0.8 clamped a `sample_every` below 1).
  explicit DispatcherProbe(DispatcherOptions options = {});
  ~DispatcherProbe();
  DispatcherProbe(const DispatcherProbe&) = delete;
  DispatcherProbe& operator=(const DispatcherProbe&) = delete;
  DispatcherProbe(DispatcherProbe&&) = delete;
  DispatcherProbe& operator=(DispatcherProbe&&) = delete;

  /// Whether the observer is installed, else why not.
  const Availability& availability() const { return availability_; }
  bool available() const { return availability_.available; }
  /// The hook it observes through: kRecordFunction or kModeKey, never kAuto.
  DispatchHook hook() const { return options_.hook; }

  /// Starts counting a step (resets the counters). `step` decides sampling.
  void begin_step(int64_t step, bool force_sample = false);
  /// Stops counting and returns the step's counters. Without a matching begin_step, zeros.
  DispatchStats end_step();

  /// Distinct signatures seen since construction.
  int64_t signatures_seen() const;

 private:
  // Observes from now on: registers the step's callback, or includes the mode key.
  void start_observing(bool inspect);
  // Undoes start_observing, if it ran.
  void stop_observing();

  DispatcherOptions options_;
  Availability availability_;
  std::unique_ptr<detail::DispatchState> state_;
  // The callback registered for the current step (the inspecting one on sampled steps, the
  // counting one on the others with count_unsampled), or 0: none is registered between steps.
  uint64_t registered_ = 0;
  // With the mode key: whether begin_step included it in the thread's keys, and whether it was
  // included before (restored by end_step).
  bool key_included_ = false;
  bool key_was_included_ = false;
  bool in_step_ = false;
  bool sampled_ = false;
};

}  // namespace recompdiag::probes
