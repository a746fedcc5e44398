#pragma once
// The one class that calls CUPTI (and the CUDA driver's cuInit, to check for a
// GPU). Built only when the toolkit's CUPTI is found; nothing here includes
// cupti.h, so the rest of the probes do not depend on the SDK's headers.

#include <cstdint>
#include <memory>
#include <string>

#include "recompdiag/probes/cupti_probe.h"

namespace recompdiag::probes::detail {

class CuptiApi {
 public:
  /// Whether a CUDA driver and at least one device are present, else why not.
  /// Checked once per process (dlopen of libcuda, cuInit, cuDeviceGetCount) and
  /// cached.
  static const Availability& driver_status();

  /// Subscribes to CUPTI, enables the activity kinds and resource callbacks,
  /// and hands CUPTI the preallocated buffers. Returns null and sets `why_not`
  /// ("<call>: <CUPTI error>") on failure, after undoing what it did. One
  /// instance per process.
  static std::unique_ptr<CuptiApi> start(const CuptiOptions& options, std::string* why_not);

  ~CuptiApi();
  CuptiApi(const CuptiApi&) = delete;
  CuptiApi& operator=(const CuptiApi&) = delete;
  CuptiApi(CuptiApi&&) = delete;
  CuptiApi& operator=(CuptiApi&&) = delete;

  /// Flushes completed activity buffers (cuptiActivityFlushAll) and returns and clears what they
  /// and the resource callbacks counted since the last call.
  CuptiStats flush_and_take();

  struct State;

 private:
  explicit CuptiApi(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace recompdiag::probes::detail
