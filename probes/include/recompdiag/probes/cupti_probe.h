#pragma once
/// \file
/// The CUPTI probe: kernels, memcpy (HtoD, DtoH, DtoD bytes), memsets and synchronisations from
/// CUPTI activity records, module loads (new GPU code: a kernel-cache miss) and CUDA graph
/// instantiations from CUPTI resource callbacks, and kernel names first seen, attributed to the
/// step in which they were flushed (the probe flushes at step end). Dropped records are counted.

#include <cstdint>
#include <memory>

#include "recompdiag/core/record.h"

namespace recompdiag::probes {

/// Options of the CUPTI probe.
struct CuptiOptions {
  /// Activity buffers allocated once at start; when all are in use CUPTI drops records (counted).
  int buffers = 8;
  /// Bytes per activity buffer.
  int64_t buffer_bytes = 4 << 20;
  /// Slots of the first-seen kernel name table.
  int64_t kernel_name_capacity = 1 << 14;

  /// Throws InputError for a count below 1 (MonitorOptions::validate calls it).
  void validate() const;
};

/// A CUPTI probe, or its null object when CUPTI was not built or cannot run (no driver, no GPU,
/// another CUPTI subscriber such as the PyTorch profiler): then `availability().reason` says why
/// and every call does nothing. Methods are called from the training thread; CUPTI's own threads
/// write preallocated counters. Owns process-wide CUPTI state: at most one available per process.
class CuptiProbe {
 public:
  virtual ~CuptiProbe() = default;
  virtual const Availability& availability() const = 0;
  bool available() const { return availability().available; }
  virtual void begin_step() = 0;
  /// Flushes CUPTI's buffers and returns what arrived since the last call.
  virtual CuptiStats end_step() = 0;
};

/// Whether this build contains the CUPTI probe (decided at configure time).
bool cupti_built();

/// Makes the CUPTI probe: the real one when built and usable, else a null object with the reason.
/// Checks for a CUDA driver and device once per process (cached). Never throws for a missing GPU.
std::unique_ptr<CuptiProbe> make_cupti_probe(const CuptiOptions& options = {});

}  // namespace recompdiag::probes
