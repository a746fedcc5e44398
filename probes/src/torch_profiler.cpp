#include "recompdiag/probes/torch_profiler.h"

#include <dlfcn.h>

#include <exception>
#include <stdexcept>

#include "detail/torch_compat.h"

namespace recompdiag::probes {

bool TorchProfiler::available() { return detail::has_torch_profiler(); }

std::string TorchProfiler::why_unavailable() {
  return available() ? std::string()
                     : "this LibTorch has no Kineto profiler API (torch/csrc/autograd/"
                       "profiler_kineto.h did not compile at configure time)";
}

std::string TorchProfiler::backend() {
  // libkineto::api(), exported by a LibTorch built with USE_KINETO (the wheels; not Debian's).
  return ::dlsym(RTLD_DEFAULT, "_ZN9libkineto3apiEv") != nullptr
             ? "with Kineto"
             : "without Kineto (LibTorch's own collector)";
}

TorchProfiler::TorchProfiler() {
  if (!available()) throw std::runtime_error(why_unavailable());
  try {
    detail::start_torch_profiler();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error("cannot start LibTorch's profiler: " +
                             what.substr(0, what.find('\n')));
  }
  running_ = true;
}

TorchProfiler::~TorchProfiler() {
  try {
    stop();
  } catch (...) {
    // Nothing to do: the session is gone either way.
  }
}

int64_t TorchProfiler::stop() {
  if (!running_) return 0;
  running_ = false;
  return detail::stop_torch_profiler();
}

}  // namespace recompdiag::probes
