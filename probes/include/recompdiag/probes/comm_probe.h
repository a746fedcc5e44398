#pragma once
/// \file
/// The `comm` probe: what the collectives of one data-parallel rank cost in each step. The layer
/// that runs the collectives (the trainer's c10d group) times each one and reports it here; the
/// probe sums them per step into `StepRecord::comm`.
///
///     recompdiag::probes::MonitorOptions options;
///     options.comm = true;  // this process is a rank of a data-parallel job
///     recompdiag::probes::Monitor monitor(model, optimizer, options);
///     // in a step, after each all-reduce completes:
///     monitor.comm()->record_collective(bytes, wait_ms);

#include <cstdint>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/step_probe.h"

namespace recompdiag::probes {

/// Sums the collectives of a step. Not thread-safe: the training thread calls every method (the
/// collectives it records are the ones it waited for). No allocation after construction.
class CommProbe final : public StepProbe {
 public:
  CommProbe() { availability_.available = true; }
  const char* name() const override { return sections::kComm; }
  const Availability& availability() const override { return availability_; }
  void begin_step(const StepBegin&) override { step_ = CommStats{}; }
  /// The step's section, from the first collective on: before any is recorded, nothing says the
  /// collectives are timed at all (a Python job that never called watch_ddp), so the steps carry
  /// no section rather than measured zeros.
  void end_step(StepRecord& record) override {
    if (recorded_any_) record.comm = step_;
  }

  /// Adds one completed collective: the bytes this rank contributed, and the time from issuing
  /// it to its completion.
  void record_collective(int64_t bytes, double wait_ms) {
    recorded_any_ = true;
    ++step_.collectives;
    step_.bytes += bytes;
    step_.wait_ms += wait_ms;
  }

 private:
  Availability availability_;
  CommStats step_;
  bool recorded_any_ = false;
};

}  // namespace recompdiag::probes
