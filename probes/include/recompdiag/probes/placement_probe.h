#pragma once
/// \file
/// The placement probe: model tensors that are not on the expected device.

#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/expected_device.h"

namespace at {
class Tensor;
}  // namespace at

namespace recompdiag::probes {

/// Counts parameters, gradients and buffers not on the expected device. Stateless.
PlacementStats inspect_placement(const std::vector<at::Tensor>& params,
                                 const std::vector<at::Tensor>& buffers,
                                 const ExpectedDevice& expected);

}  // namespace recompdiag::probes
