#pragma once
/// \file
/// The JIT probe: TorchScript compiles and graph-executor plan builds per step, counted from the
/// JIT itself (a registered post pass runs once per optimized plan the executors build; watched
/// compilation units say what was compiled), not inferred from timing.

#include <cstdint>
#include <memory>

#include "recompdiag/core/record.h"

namespace torch::jit {
struct CompilationUnit;
}  // namespace torch::jit

namespace recompdiag::probes {

/// Counts, per step:
/// - `compiles`: compilation units newly passed to `watch` (the trainer watches each unit it
///   compiles; one unit is one torch::jit::compile call);
/// - `plan_builds`: optimized plans built by any graph executor in the process (a custom JIT post
///   pass counts its own invocations: one per plan, including autodiff subgraph executors);
/// - `profiling_runs`: calls of watched functions that ran while their executor had no optimized
///   plan yet (the profiling executor's shape-recording runs). Needs the TorchScript-scope
///   RecordFunction callback, which one JIT probe per process can hold; it is registered only
///   for steps in which a watched function has no optimized plan, so steady steps pay nothing.
///
/// Methods are not thread-safe (training thread). Keeps weak references to watched units (at most
/// `kMaxWatched`; the oldest is forgotten). Neither copyable nor movable; the destructor removes
/// the pass and the callback.
class JitProbe {
 public:
  static constexpr int kMaxWatched = 16;

  JitProbe();
  ~JitProbe();
  JitProbe(const JitProbe&) = delete;
  JitProbe& operator=(const JitProbe&) = delete;
  JitProbe(JitProbe&&) = delete;
  JitProbe& operator=(JitProbe&&) = delete;

  /// Whether the post pass is registered, and why not (or why profiling runs are not counted).
  const Availability& availability() const { return availability_; }
  bool available() const { return availability_.available; }

  /// Watches a compilation unit. A unit not watched before counts as one compile in the current
  /// (or next) step. Watching the same unit again does nothing.
  void watch(const std::shared_ptr<torch::jit::CompilationUnit>& unit);
  /// Compilation units still alive and watched.
  int64_t watched() const;

  /// Marks the start of a step: notes the plan-build count and which watched functions already
  /// have an optimized plan.
  void begin_step();
  /// The step's counts since begin_step (all 0 when unavailable).
  JitStats end_step();

 private:
  struct Impl;  // the pass's and the callback's counters, the watched units (jit_probe.cpp)

  // Registers the TorchScript-scope callback for this step (when this probe counts calls and it
  // is not registered yet); the other removes it.
  void count_calls();
  void stop_counting_calls();

  Availability availability_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace recompdiag::probes
