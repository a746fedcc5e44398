#pragma once
/// \file
/// LibTorch's own profiler, driven as `torch.profiler.profile(activities=[ProfilerActivity.CPU])`
/// drives it: the peer that `recompdiag bench overhead` sets beside the monitor, on the same step
/// in the same process.
///
///     if (probes::TorchProfiler::available()) {
///       probes::TorchProfiler profiler;  // starts on this thread
///       train_some_steps();
///       const int64_t events = profiler.stop();
///     }

#include <cstdint>
#include <string>

namespace recompdiag::probes {

/// One profiling session of LibTorch's profiler on the constructing thread: the KINETO profiler
/// state with CPU activities and every RecordFunction scope, no shapes, memory, stacks or flops
/// (torch.profiler's defaults). Whether LibTorch links Kineto itself (backend()) decides what
/// collects the events; the RecordFunction callbacks on the step's hot path are the same.
/// Construct, use and stop on one thread; one session per thread at a time. Neither copyable nor
/// movable.
class TorchProfiler {
 public:
  /// Whether this LibTorch offers the profiler (checked at configure time).
  static bool available();
  /// Why not, when not; empty when available.
  static std::string why_unavailable();
  /// "Kineto" when LibTorch links libkineto, else "without Kineto (LibTorch's own collector)".
  static std::string backend();

  /// Starts profiling. Throws std::runtime_error when !available() or when a profiler already
  /// runs on this thread.
  TorchProfiler();
  /// Stops the session when stop() was not called; never throws.
  ~TorchProfiler();
  TorchProfiler(const TorchProfiler&) = delete;
  TorchProfiler& operator=(const TorchProfiler&) = delete;
  TorchProfiler(TorchProfiler&&) = delete;
  TorchProfiler& operator=(TorchProfiler&&) = delete;

  /// Stops profiling and returns the events collected (their post-processing, which
  /// torch.profiler also does at its stop, is part of this call). 0 when already stopped.
  int64_t stop();

 private:
  bool running_ = false;
};

}  // namespace recompdiag::probes
