#pragma once
/// \file
/// NVTX ranges for run, phase, step and compile, so an Nsight Systems timeline lines up with the
/// run file. All NVTX calls of recompdiag go through this header. Built without NVTX (or with no
/// tool attached), the calls do nothing worth measuring.

namespace recompdiag::probes {

/// Whether this build emits NVTX ranges.
bool nvtx_enabled();
/// Pushes a range on the calling thread's NVTX stack. `name` is copied by NVTX.
void nvtx_push(const char* name);
/// Pops the innermost range of the calling thread.
void nvtx_pop();

/// A scoped NVTX range: pushed on construction, popped on destruction (same thread).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtx_push(name); }
  ~NvtxRange() { nvtx_pop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  NvtxRange(NvtxRange&&) = delete;
  NvtxRange& operator=(NvtxRange&&) = delete;
};

}  // namespace recompdiag::probes
