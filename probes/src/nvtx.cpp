// NVTX ranges (built when the NVTX3 headers are found; nvtx_off.cpp otherwise).
#include "recompdiag/probes/nvtx.h"

#include <nvtx3/nvToolsExt.h>

namespace recompdiag::probes {

bool nvtx_enabled() { return true; }
void nvtx_push(const char* name) { nvtxRangePushA(name); }
void nvtx_pop() { nvtxRangePop(); }

}  // namespace recompdiag::probes
