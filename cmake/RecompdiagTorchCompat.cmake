# The LibTorch compatibility seam, decided once at configure time (after find_package(Torch)).
#
# Every LibTorch API that moved between 1.13 and 2.x is probed here with a small compile check
# against the LibTorch just found, and the answers go into one generated header,
# recompdiag/torch_features.h, that only the compat files include
# (probes/src/detail/torch_compat*.cpp, trainer/src/detail/torch_compat.cpp and
# python/src/torch_compat.cpp). The probes, the trainer and the Python module call those files'
# functions and read the same on every version.
#
# Sets:
#   RECOMPDIAG_TORCH_VERSION     LibTorch's version ("1.13.0", "2.15.0")
#   RECOMPDIAG_CXX_STANDARD      17, or 20 for a LibTorch whose headers require C++20 (2.13 on)
#   RECOMPDIAG_TORCH_FEATURES_DIR  the folder holding recompdiag/torch_features.h
#   RECOMPDIAG_TORCH_GLOG        ON when LibTorch's c10 logs through glog (link glog, quiet it)
#   RECOMPDIAG_HAVE_GLOO         ON when c10d's ProcessGroupGloo compiles here
#   RECOMPDIAG_WHY_NO_GLOO       why not
#   RECOMPDIAG_HAVE_NCCL         ON when c10d's ProcessGroupNCCL compiles here (a CUDA LibTorch)
#   RECOMPDIAG_WHY_NO_NCCL       why not
#   RECOMPDIAG_NCCL_INCLUDE_FLAGS  the folders its file needs (nccl.h, the CUDA runtime's headers)
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)

# Debian's TorchConfig sets Torch_VERSION through its version file; a wheel's as well. The macro
# header is the fallback that every LibTorch ships.
set(RECOMPDIAG_TORCH_VERSION "${Torch_VERSION}")
if(NOT RECOMPDIAG_TORCH_VERSION)
  foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
    if(EXISTS "${dir}/torch/csrc/api/include/torch/version.h")
      file(STRINGS "${dir}/torch/csrc/api/include/torch/version.h" v REGEX "define TORCH_VERSION \"")
      string(REGEX REPLACE ".*\"([0-9.]+).*" "\\1" RECOMPDIAG_TORCH_VERSION "${v}")
    endif()
  endforeach()
endif()
if(NOT RECOMPDIAG_TORCH_VERSION)
  message(FATAL_ERROR "recompdiag: cannot tell the version of the LibTorch found at "
                      "${TORCH_INSTALL_PREFIX}")
endif()

# ATen's headers require C++20 from LibTorch 2.13 on (an #error in c10/macros/Macros.h); the
# whole tree then builds as C++20, so that one standard library ABI and one set of headers serve
# every target. Set before any target is created.
if(RECOMPDIAG_TORCH_VERSION VERSION_GREATER_EQUAL 2.13)
  set(RECOMPDIAG_CXX_STANDARD 20)
else()
  set(RECOMPDIAG_CXX_STANDARD 17)
endif()
set(CMAKE_CXX_STANDARD ${RECOMPDIAG_CXX_STANDARD})

cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_INCLUDES ${TORCH_INCLUDE_DIRS})
set(CMAKE_REQUIRED_FLAGS "-std=c++${RECOMPDIAG_CXX_STANDARD} ${TORCH_CXX_FLAGS}")
set(CMAKE_REQUIRED_DEFINITIONS -DNDEBUG)
set(CMAKE_REQUIRED_QUIET ON)
# Header checks: compiled, never linked.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The caching allocator's statistics: StatType moved from c10::cuda::CUDACachingAllocator to
# c10::CachingAllocator (c10/core/CachingDeviceAllocator.h) in 2.x. Header-only checks: the
# probe's file is built only where c10_cuda exists.
if(RECOMPDIAG_HAVE_CUDA_ALLOCATOR)
  if(CUDA_INCLUDE_DIRS)
    list(APPEND CMAKE_REQUIRED_INCLUDES ${CUDA_INCLUDE_DIRS})
  endif()
  if(CUDAToolkit_INCLUDE_DIRS)
    list(APPEND CMAKE_REQUIRED_INCLUDES ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  check_cxx_source_compiles("
    #include <c10/core/CachingDeviceAllocator.h>
    #include <c10/cuda/CUDACachingAllocator.h>
    int main() { return static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE); }"
    RECOMPDIAG_TORCH_HAS_CACHING_DEVICE_ALLOCATOR)
endif()

# TorchScript's graph executor (deprecated in 2.x): the JIT probe asks a function's executor
# whether its plan is optimized, the deopt fault sets the number of profiling runs.
check_cxx_source_compiles("
  #include <torch/csrc/jit/api/function_impl.h>
  #include <torch/csrc/jit/runtime/graph_executor.h>
  bool f(torch::jit::GraphFunction& g) { return g.get_executor().isOptimized(); }
  int main() { return 0; }"
  RECOMPDIAG_TORCH_HAS_EXECUTOR_IS_OPTIMIZED)
check_cxx_source_compiles("
  #include <torch/csrc/jit/runtime/graph_executor.h>
  int main() { return static_cast<int>(torch::jit::getNumProfiledRuns().load()); }"
  RECOMPDIAG_TORCH_HAS_NUM_PROFILED_RUNS)

# The Python objects in LibTorch's thread-local state (at::impl::ThreadLocalPythonObjects, 2.x,
# where torch's backward keeps a contextvars.Context): the Python module's comm hook sets them
# aside while it issues an all-reduce.
check_cxx_source_compiles("
  #include <ATen/ThreadLocalPythonObjects.h>
  int main() {
    at::impl::ThreadLocalPythonObjects::set_state(at::impl::ThreadLocalPythonObjects::get_state());
    return 0;
  }"
  RECOMPDIAG_TORCH_HAS_TLS_PYTHON_OBJECTS)

# LibTorch's own profiler as torch.profiler drives it (the Kineto profiler state with CPU
# activities): `bench overhead`'s peer arm. The same calls on 1.13 and 2.x; a LibTorch without
# them gets an arm that says why it is missing.
check_cxx_source_compiles("
  #include <torch/csrc/autograd/profiler_kineto.h>
  int main() {
    namespace impl = torch::profiler::impl;
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
    torch::autograd::profiler::prepareProfiler(config, {impl::ActivityType::CPU});
    torch::autograd::profiler::enableProfiler(config, {impl::ActivityType::CPU});
    return static_cast<int>(torch::autograd::profiler::disableProfiler()->events().size());
  }"
  RECOMPDIAG_TORCH_HAS_KINETO_PROFILER)

# c10 logs through glog in Debian's build; the wheel's c10 has its own logging.
check_cxx_source_compiles("
  #include <c10/macros/Macros.h>
  #ifndef C10_USE_GLOG
  #error c10 without glog
  #endif
  int main() { return 0; }"
  RECOMPDIAG_TORCH_GLOG)

# c10d's Gloo process group: ProcessGroupGloo.hpp includes Gloo's headers, which PyPI's wheel does
# not ship (Gloo is linked into libtorch_cpu). Debian's libgloo-dev provides them, on the device
# .deps does (scripts/gpu-deps). The group is built when the header compiles with them: our one
# file only calls LibTorch's ProcessGroupGloo API and never a Gloo function itself.
find_path(RECOMPDIAG_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
# Passed as -I only when the compiler does not search the folder anyway: -I/usr/include breaks
# libstdc++'s #include_next.
set(RECOMPDIAG_GLOO_INCLUDE_FLAGS "")
if(RECOMPDIAG_GLOO_INCLUDE_DIR AND NOT RECOMPDIAG_GLOO_INCLUDE_DIR IN_LIST
   CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
  set(RECOMPDIAG_GLOO_INCLUDE_FLAGS "${RECOMPDIAG_GLOO_INCLUDE_DIR}")
endif()
if(RECOMPDIAG_GLOO_INCLUDE_DIR)
  list(APPEND CMAKE_REQUIRED_INCLUDES ${RECOMPDIAG_GLOO_INCLUDE_FLAGS})
  check_cxx_source_compiles("
    #include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
    int main() { return 0; }"
    RECOMPDIAG_TORCH_GLOO_HEADERS)
endif()

# c10d's NCCL process group, for ranks that train on CUDA: in a CUDA LibTorch built with it (a
# wheel's torch_cuda carries it, and its headers need USE_C10D_NCCL), with nccl.h (the wheel's
# nvidia-nccl package, or the CUDA toolkit's). Compiled, never linked, as the checks above.
set(RECOMPDIAG_NCCL_INCLUDE_FLAGS "")
if(RECOMPDIAG_HAVE_CUDA_ALLOCATOR)
  find_path(RECOMPDIAG_NCCL_INCLUDE_DIR nccl.h
    HINTS ${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include ${RECOMPDIAG_CUDA_ROOT}/include
          ${CUDA_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
  if(RECOMPDIAG_NCCL_INCLUDE_DIR)
    set(RECOMPDIAG_NCCL_INCLUDE_FLAGS
        ${RECOMPDIAG_NCCL_INCLUDE_DIR} ${CUDA_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
    list(APPEND CMAKE_REQUIRED_INCLUDES ${RECOMPDIAG_NCCL_INCLUDE_FLAGS})
    list(APPEND CMAKE_REQUIRED_DEFINITIONS -DUSE_C10D_NCCL)
    check_cxx_source_compiles("
      #include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
      c10::intrusive_ptr<c10d::ProcessGroupNCCL::Options> f() {
        return c10d::ProcessGroupNCCL::Options::create();
      }
      int main() { return 0; }"
      RECOMPDIAG_TORCH_NCCL_HEADERS)
  endif()
endif()
cmake_pop_check_state()

if(RECOMPDIAG_TORCH_NCCL_HEADERS)
  set(RECOMPDIAG_HAVE_NCCL ON)
  set(RECOMPDIAG_WHY_NO_NCCL "")
elseif(NOT RECOMPDIAG_HAVE_CUDA_ALLOCATOR)
  set(RECOMPDIAG_HAVE_NCCL OFF)
  set(RECOMPDIAG_WHY_NO_NCCL "LibTorch ${RECOMPDIAG_TORCH_VERSION} is a CPU build")
elseif(NOT RECOMPDIAG_NCCL_INCLUDE_DIR)
  set(RECOMPDIAG_HAVE_NCCL OFF)
  set(RECOMPDIAG_WHY_NO_NCCL "no nccl.h (the wheel's nvidia-nccl package, or the CUDA toolkit's)")
else()
  set(RECOMPDIAG_HAVE_NCCL OFF)
  string(CONCAT RECOMPDIAG_WHY_NO_NCCL "c10d's ProcessGroupNCCL.hpp does not compile against "
      "LibTorch ${RECOMPDIAG_TORCH_VERSION} (built without NCCL?)")
endif()

if(RECOMPDIAG_TORCH_GLOO_HEADERS)
  set(RECOMPDIAG_HAVE_GLOO ON)
  set(RECOMPDIAG_WHY_NO_GLOO "")
elseif(NOT RECOMPDIAG_GLOO_INCLUDE_DIR)
  set(RECOMPDIAG_HAVE_GLOO OFF)
  string(CONCAT RECOMPDIAG_WHY_NO_GLOO "no Gloo headers (gloo/algorithm.h) for c10d's ProcessGroupGloo: "
      "LibTorch ${RECOMPDIAG_TORCH_VERSION} ships none; apt-get install libgloo-dev")
else()
  set(RECOMPDIAG_HAVE_GLOO OFF)
  string(CONCAT RECOMPDIAG_WHY_NO_GLOO "c10d's ProcessGroupGloo.hpp does not compile against LibTorch "
      "${RECOMPDIAG_TORCH_VERSION} with the Gloo headers in ${RECOMPDIAG_GLOO_INCLUDE_DIR}")
endif()

foreach(flag RECOMPDIAG_TORCH_HAS_CACHING_DEVICE_ALLOCATOR RECOMPDIAG_TORCH_HAS_EXECUTOR_IS_OPTIMIZED
             RECOMPDIAG_TORCH_HAS_NUM_PROFILED_RUNS RECOMPDIAG_TORCH_HAS_KINETO_PROFILER
             RECOMPDIAG_TORCH_HAS_TLS_PYTHON_OBJECTS
             RECOMPDIAG_TORCH_GLOG RECOMPDIAG_HAVE_GLOO RECOMPDIAG_HAVE_NCCL)
  if(${flag})
    set(${flag}_01 1)
  else()
    set(${flag}_01 0)
  endif()
endforeach()
set(RECOMPDIAG_TORCH_FEATURES_DIR ${PROJECT_BINARY_DIR}/torch_features)
configure_file(${CMAKE_CURRENT_LIST_DIR}/torch_features.h.in
               ${RECOMPDIAG_TORCH_FEATURES_DIR}/recompdiag/torch_features.h @ONLY)
