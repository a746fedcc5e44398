#pragma once
// What CUPTI's activity records and resource callbacks mean for a step's counters, apart from the
// SDK: cupti_api.cpp turns each CUPTI record into an `Activity` and hands it here. Pure and free
// of CUPTI headers, so that tests feed it synthetic records on a machine without a GPU (kineto
// splits processActivities from its CUPTI calls the same way).

#include <cstdint>

#include "detail/signature_table.h"
#include "recompdiag/core/record.h"

namespace recompdiag::probes::detail {

// One thing CUPTI reported.
struct Activity {
  enum class Kind {
    kKernel,              // a kernel ran: `name`, `start_ns`, `end_ns`
    kMemcpy,              // a memcpy: `direction`, `bytes`
    kMemset,              // a memset
    kSync,                // a synchronization; `device_side` when a stream waited on an event
    kModuleLoad,          // new GPU code loaded (resource callback): a kernel-cache miss
    kGraphInstantiation,  // a CUDA graph instantiated (resource callback)
    kDropped,             // `count` records CUPTI dropped (no free buffer)
  };
  enum class Direction { kHostToDevice, kDeviceToHost, kDeviceToDevice, kOther };

  Kind kind = Kind::kKernel;
  const char* name = nullptr;  // kernel name, not owned; null when CUPTI gave none
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  Direction direction = Direction::kOther;
  int64_t bytes = 0;
  bool device_side = false;
  int64_t count = 0;
};

// Adds what `activity` means to `out`: kernels and their time, first-seen kernel names (through
// `kernel_names`; a full table counts as dropped), memcpy count and bytes by direction, memsets,
// host-blocking syncs, module loads, graph instantiations and drops. No allocation, no lock.
void interpret(const Activity& activity, SignatureTable& kernel_names, CuptiStats& out);

}  // namespace recompdiag::probes::detail
