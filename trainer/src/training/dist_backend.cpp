// Whether a job's c10d backend can run in this build on its device. nccl_available() and
// why_no_nccl() come from the c10d seam compiled here (data_parallel_group.cpp, or
// data_parallel_group_off.cpp where no group builds).

#include "recompdiag/trainer/dist_backend.h"

#include "recompdiag/core/error.h"

namespace recompdiag::trainer {

void check_backend(const runner::DistributedOptions& options, const std::string& device) {
  if (options.backend != "nccl") return;
  if (!nccl_available()) throw InputError("--dist-backend nccl: unavailable: " + why_no_nccl());
  if (device.rfind("cuda", 0) != 0) {
    throw InputError("--dist-backend nccl needs the ranks on CUDA (--device cuda), not " + device);
  }
}

}  // namespace recompdiag::trainer
