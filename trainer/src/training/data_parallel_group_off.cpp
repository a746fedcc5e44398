// The data-parallel group where c10d's ProcessGroupGloo cannot be built against this LibTorch
// (cmake/RecompdiagTorchCompat.cmake decides; the reason is in torch_features.h): joining a job
// fails at once with one JobError line that says why, so `train --world-size N` exits as any
// rendezvous failure does and a single-process run is unaffected.
#include <stdexcept>

#include "recompdiag/core/error.h"
#include "recompdiag/torch_features.h"
#include "training/data_parallel_group.h"

namespace recompdiag::trainer {

bool nccl_available() { return false; }
std::string why_no_nccl() {
  return std::string("no c10d process group in this build: ") + RECOMPDIAG_WHY_NO_GLOO;
}

}  // namespace recompdiag::trainer

namespace recompdiag::trainer::detail {

struct DataParallelGroup::Impl {};

DataParallelGroup::DataParallelGroup(const runner::DistributedOptions& options,
                                     const c10::Device&) {
  options.validate();
  throw JobError("data-parallel training unavailable in this build: " +
                 std::string(RECOMPDIAG_WHY_NO_GLOO));
}

DataParallelGroup::~DataParallelGroup() = default;

// Unreachable: no group is ever constructed.
int DataParallelGroup::rank() const { return 0; }
int DataParallelGroup::world_size() const { return 1; }
const std::string& DataParallelGroup::job_id() const {
  static const std::string none;
  return none;
}
std::string DataParallelGroup::backend() const { return "none"; }
double DataParallelGroup::shard_weight() const { return 1.0; }
void DataParallelGroup::barrier(int64_t) {}
CollectiveCost DataParallelGroup::average(const std::vector<at::Tensor>&, int64_t, double) {
  return {};
}
void DataParallelGroup::shard(std::vector<Batch>&) {}
CollectiveCost DataParallelGroup::average_step(const std::vector<at::Tensor>&, StepLosses&, int64_t,
                                               bool) {
  return {};
}

}  // namespace recompdiag::trainer::detail
