#pragma once
/// \file
/// The torch.compile probe: per step, what TorchDynamo ran (compiled code, compiles, eager
/// fallbacks), seen from C++ through the RecordFunction scopes dynamo opens.
///
/// Dynamo opens "TorchDynamo Cache Lookup" on each call of a frame that has compiled code and
/// "Torch-Compiled Region: F/C" around each run of compiled code, F the frame and C its compile
/// ("!A/F/C" under compiled autograd). A region seen for the first time was just compiled (C > 0:
/// a recompile, some guard failed); a lookup that no region follows ran the frame eagerly: dynamo
/// reached its recompile limit or skipped the frame. Compile time is not visible to a C++
/// callback (dynamo records its compile phases only while torch.profiler runs): the Python package
/// measures it with dynamo's compile callbacks and adds it here.

#include <cstdint>
#include <memory>
#include <string_view>

#include "recompdiag/probes/step_probe.h"

namespace recompdiag::probes {

/// Counts dynamo's scopes per step into `StepRecord::compiled`. Owns a global RecordFunction
/// callback (function scope, no inputs) while alive, enabled only on observed steps: once any
/// callback is on, LibTorch builds a RecordFunction for every op of the step (about 8% of a small
/// compiled step on CPU). Scope callbacks may come from any thread; the other methods are called
/// from the training thread.
class CompiledProbe final : public StepProbe {
 public:
  /// Observes every `sample_every`-th step, steps the Monitor marks `observe_all`, and every step
  /// from a compile on (observe_now()).
  explicit CompiledProbe(int64_t sample_every = 1);
  ~CompiledProbe() override;
  CompiledProbe(const CompiledProbe&) = delete;
  CompiledProbe& operator=(const CompiledProbe&) = delete;
  CompiledProbe(CompiledProbe&&) = delete;
  CompiledProbe& operator=(CompiledProbe&&) = delete;

  const char* name() const override;
  const Availability& availability() const override;
  void begin_step(const StepBegin& begin) override;
  void end_step(StepRecord& record) override;

  /// Adds time dynamo spent compiling to the current step (from dynamo's compile callbacks).
  void add_compile_time(double ms);
  /// Records torch's own compile counters for the current step (the compile ledger, read by the
  /// Python package): adds `value` to the ledger field of the compiled section named `name`
  /// (kCount, kMilliseconds; from kCompiledLedgerFirst on), or sets it when the field is a level
  /// (kLevel), which later steps keep. Counts added between steps go to the next step. From the
  /// first call on, every step is marked `ledger`. Throws std::invalid_argument for a name that
  /// is not a ledger field (the probe's own fields, a flag, an unknown name).
  void add_ledger(std::string_view name, double value);
  /// Observes the rest of the current step: called when dynamo starts compiling, so that the
  /// compiled region it is about to run is counted even on a step sampling skipped.
  void observe_now();
  /// Distinct compiled regions (F/C) seen so far.
  int64_t regions_seen() const;

  struct State;  // what the scope callback writes; public for the callback, opaque to users

 private:
  std::unique_ptr<State> state_;
  Availability availability_{true, ""};
  uint64_t callback_ = 0;
  int64_t sample_every_ = 1;
  bool begun_ = false;
  bool enabled_ = false;  // the callback is on (an observed step)
};

}  // namespace recompdiag::probes
