#pragma once
/// \file
/// Where records go while a run trains: the run file, a Prometheus exporter, a test.

#include "recompdiag/core/record.h"

namespace recompdiag {

/// Receives the records of one run in order: run start, then steps and events, then run end.
/// Called on the training thread; an implementation must not block for long (the step waits).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void on_run_start(const RunHeader& header) {}
  virtual void on_step(const StepRecord& step) {}
  virtual void on_event(const EventRecord& event) {}
  virtual void on_run_end(const RunSummary& summary) {}
};

}  // namespace recompdiag
