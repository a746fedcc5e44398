#pragma once
/// \file
/// The device a model is meant to train on, parsed once from a torch device string.

#include <string>

namespace recompdiag::probes {

/// True when a torch device is the expected one: "cuda" matches any CUDA device, "cuda:1" only
/// that one. Plain data; copy freely.
struct ExpectedDevice {
  /// Throws InputError when `device` is not a torch device string.
  explicit ExpectedDevice(const std::string& device);
  std::string text;
  int type = 0;    ///< c10::DeviceType as int.
  int index = -1;  ///< -1: any index.
};

}  // namespace recompdiag::probes
