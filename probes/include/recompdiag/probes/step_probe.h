#pragma once
/// \file
/// The one interface of every probe the Monitor runs at each step, and its null object.
///
/// A step probe is told when a step begins and fills its section of the `StepRecord` when the step
/// ends. One that cannot run (disabled, no GPU, another observer installed) reports why through
/// `availability()` and does nothing: the Monitor loops over its probes without asking which is
/// which.

#include <cstdint>
#include <memory>
#include <string>

#include "recompdiag/core/record.h"

namespace recompdiag::probes {

/// What a probe learns when a step begins.
struct StepBegin {
  int64_t step = 0;          ///< Global step, from 0.
  bool observe_all = false;  ///< Observe this step even where sampling would skip it.
};

/// One probe of the Monitor. Methods are called from the training thread only. Implementations own
/// whatever they hook into and undo it on destruction; they are neither copied nor moved.
class StepProbe {
 public:
  virtual ~StepProbe() = default;

  /// The probe's section name (`sections::k*`): its key in `RunHeader::probes` and in step lines.
  virtual const char* name() const = 0;
  /// Whether it runs, else why not ("disabled by MonitorOptions", "unavailable: ...").
  virtual const Availability& availability() const = 0;
  bool available() const { return availability().available; }

  /// A step begins. Probes that must not see the monitor's own work start counting here.
  virtual void begin_step(const StepBegin& begin) = 0;
  /// The step ended: writes this probe's section of `record`, or leaves it absent (a probe that is
  /// unavailable, or an end without a begin where counts would be meaningless).
  virtual void end_step(StepRecord& record) = 0;
};

/// A probe that cannot run: `availability()` is {false, reason} and its calls do nothing.
std::unique_ptr<StepProbe> make_null_probe(const char* name, std::string reason);

}  // namespace recompdiag::probes
