#pragma once
// What the dispatcher probe's RecordFunction callbacks write into: the step's counters and the
// first-seen signature table. Private to dispatcher_probe.cpp (the public header only names it),
// so that LibTorch-free code never sees the layout and it can change without a rebuild of users.

#include <atomic>
#include <cstddef>

#include "detail/section_counters.h"
#include "detail/signature_table.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag::probes::detail {

/// Shared by the training thread (begin, end) and the callbacks on any thread: the counters are
/// relaxed atomics and the table is lock-free; the two flags are written before the callbacks are
/// installed and only read afterwards. `inspecting` tells the mode key's fallback whether the step
/// reads op inputs: set by begin_step before it includes the key.
struct DispatchState {
  explicit DispatchState(std::size_t signature_capacity) : signatures(signature_capacity) {}
  SectionCounters<DispatchStats, kDispatchSection> counters;
  SignatureTable signatures;
  bool expect_cuda = false;
  bool hash_signatures = true;
  std::atomic<bool> inspecting{false};
};

}  // namespace recompdiag::probes::detail
