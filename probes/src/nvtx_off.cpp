// NVTX off: the calls do nothing (built when RECOMPDIAG_WITH_NVTX is OFF or
// NVTX3 is missing).
#include "recompdiag/probes/nvtx.h"

namespace recompdiag::probes {

bool nvtx_enabled() { return false; }
void nvtx_push(const char* /*name*/) {}
void nvtx_pop() {}

}  // namespace recompdiag::probes
