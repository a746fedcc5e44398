#pragma once
/// \file
/// One RecordSink that hands every record to several: the run file, an exporter, a test's
/// collector.

#include <vector>

#include "recompdiag/core/record_sink.h"

namespace recompdiag {

/// Hands each record to every sink added, in the order they were added. Does not own them: they
/// must outlive it or outlive the last record sent.
class RecordFanOut final : public RecordSink {
 public:
  void add(RecordSink& sink) { sinks_.push_back(&sink); }

  void on_run_start(const RunHeader& header) override {
    for (RecordSink* s : sinks_) s->on_run_start(header);
  }
  void on_step(const StepRecord& step) override {
    for (RecordSink* s : sinks_) s->on_step(step);
  }
  void on_event(const EventRecord& event) override {
    for (RecordSink* s : sinks_) s->on_event(event);
  }
  void on_run_end(const RunSummary& summary) override {
    for (RecordSink* s : sinks_) s->on_run_end(summary);
  }

 private:
  std::vector<RecordSink*> sinks_;
};

}  // namespace recompdiag
