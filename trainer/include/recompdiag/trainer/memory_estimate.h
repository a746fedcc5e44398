#pragma once
/// \file
/// The memory a training run will need, estimated from its config before anything is allocated,
/// and the memory the host can still give: a config that cannot fit is refused as bad input
/// instead of being killed by the kernel or aborting inside LibTorch's allocator. Torch-free.
///
///     const MemoryEstimate need = estimate_memory(config);
///     check_fits(need, available_host_memory(), "host memory");  // throws InputError
///     check_fits(need, available_device_memory(0), "memory on cuda:0");  // on CUDA

#include <cstdint>
#include <optional>
#include <string>

#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

/// Bytes a run needs, by what holds them. Doubles, so absurd configs cannot overflow.
struct MemoryEstimate {
  double data_bytes = 0.0;        ///< The epoch's batches, generated once and kept.
  double generation_bytes = 0.0;  ///< Temporaries while one batch is generated.
  double parameter_bytes = 0.0;   ///< Parameters, gradients and Adam's two moments.
  double activation_bytes = 0.0;  ///< One step's activations kept for backward, and their grads.

  /// Peak: everything kept, plus the larger of the generation and the step's working set.
  double total_bytes() const;
};

/// An upper-end estimate of what `config` allocates (the model, data and step of the built-in
/// trainer), within a factor of about two.
MemoryEstimate estimate_memory(const TrainConfig& config);

/// Bytes this process can still allocate on the host: /proc/meminfo's MemAvailable, capped by the
/// cgroup's memory limit less its usage when one is set. nullopt when neither can be read.
std::optional<double> available_host_memory();

/// Free bytes on CUDA device `cuda_index`, asked of the CUDA driver (libcuda.so.1, loaded at run
/// time, so every build has this). nullopt when there is no driver, no such device, or the driver
/// refuses. Retains and releases the device's primary context, the one LibTorch uses.
std::optional<double> available_device_memory(int cuda_index);

/// Throws InputError("needs ~95.1 GiB of <where>, 24.0 GiB available: ...") when `need` does not
/// fit in `available`; does nothing when `available` is unknown.
void check_fits(const MemoryEstimate& need, std::optional<double> available,
                const std::string& where);

/// "1.5 GiB", "320 MiB": for messages.
std::string format_bytes_binary(double bytes);

}  // namespace recompdiag::trainer
