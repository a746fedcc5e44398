#pragma once
/// \file
/// Whether a job's c10d backend can run in this build: NCCL where this LibTorch has c10d's
/// ProcessGroupNCCL. These live with the c10d group (data_parallel_group*.cpp), check_backend()
/// beside it (dist_backend.cpp); the torch-free parsing of a rank's place in a job is the
/// runner's (recompdiag/runner/distributed.h), which the flags fuzzer links alone.

#include <string>

#include "recompdiag/runner/distributed.h"

namespace recompdiag::trainer {

using runner::DistributedOptions;

/// Whether this build has c10d's NCCL process group (a CUDA LibTorch built with it, nccl.h found
/// at configure time), and why not when not.
bool nccl_available();
std::string why_no_nccl();

/// Throws InputError unless `options.backend` can run on `device` (what --device resolved to:
/// "cpu", "cuda:0"): nccl needs this build's NCCL group and a CUDA device.
void check_backend(const DistributedOptions& options, const std::string& device);

}  // namespace recompdiag::trainer
