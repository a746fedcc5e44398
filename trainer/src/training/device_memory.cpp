// Free memory of a CUDA device for the memory pre-flight, through the CUDA driver API loaded at
// run time (libcuda.so.1): no CUDA headers or toolkit at build time, so the same code is compiled
// on every build, and a machine without a driver simply reports "unknown".

#include <dlfcn.h>

#include <cstddef>

#include "recompdiag/trainer/memory_estimate.h"

namespace recompdiag::trainer {
namespace {

// The driver API's types, as its ABI defines them (cuda.h): results are an int enum, 0 = success;
// a device is an int; a context is an opaque pointer.
using CuResult = int;
using CuDevice = int;
using CuContext = void*;

template <class Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(lib, name));
}

}  // namespace

std::optional<double> available_device_memory(int cuda_index) {
  // Loaded once and kept: unloading the driver under LibTorch would be unsafe.
  static void* const lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr || cuda_index < 0) return std::nullopt;
  const auto init = symbol<CuResult (*)(unsigned)>(lib, "cuInit");
  const auto device_get = symbol<CuResult (*)(CuDevice*, int)>(lib, "cuDeviceGet");
  const auto retain = symbol<CuResult (*)(CuContext*, CuDevice)>(lib, "cuDevicePrimaryCtxRetain");
  auto release = symbol<CuResult (*)(CuDevice)>(lib, "cuDevicePrimaryCtxRelease_v2");
  if (release == nullptr)
    release = symbol<CuResult (*)(CuDevice)>(lib, "cuDevicePrimaryCtxRelease");
  const auto push = symbol<CuResult (*)(CuContext)>(lib, "cuCtxPushCurrent_v2");
  const auto pop = symbol<CuResult (*)(CuContext*)>(lib, "cuCtxPopCurrent_v2");
  const auto mem_get_info =
      symbol<CuResult (*)(std::size_t*, std::size_t*)>(lib, "cuMemGetInfo_v2");
  if (!init || !device_get || !retain || !release || !push || !pop || !mem_get_info) {
    return std::nullopt;
  }
  CuDevice device = 0;
  CuContext context = nullptr;
  if (init(0) != 0 || device_get(&device, cuda_index) != 0 || retain(&context, device) != 0) {
    return std::nullopt;
  }
  // The primary context is the one LibTorch's runtime uses: retaining it costs nothing extra.
  std::optional<double> free_bytes;
  if (push(context) == 0) {
    std::size_t free = 0;
    std::size_t total = 0;
    if (mem_get_info(&free, &total) == 0) free_bytes = static_cast<double>(free);
    CuContext popped = nullptr;
    pop(&popped);
  }
  release(device);
  return free_bytes;
}

}  // namespace recompdiag::trainer
