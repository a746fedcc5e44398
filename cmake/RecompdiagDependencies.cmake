# Every third-party dependency is found here, once; the optional SDKs decide
# which sources the targets get (see RECOMPDIAG_HAVE_*), never an #if in the
# trainer or CLI.

find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)

set(RECOMPDIAG_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA Toolkit root searched for CUPTI and NVTX3")

if(RECOMPDIAG_WITH_TORCH)
  # LibTorch: Debian's libtorch-dev, or the CUDA LibTorch inside a PyTorch wheel
  # (scripts/setup --torch pypi; by hand, pass
  # -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')).
  # A CUDA LibTorch's config looks for the CUDA Toolkit itself (FindCUDA or FindCUDAToolkit): it
  # gets the same root as the CUPTI and NVTX searches below, unless the caller named one.
  if(EXISTS "${RECOMPDIAG_CUDA_ROOT}")
    if(NOT DEFINED CUDA_TOOLKIT_ROOT_DIR)
      set(CUDA_TOOLKIT_ROOT_DIR "${RECOMPDIAG_CUDA_ROOT}")
    endif()
    if(NOT DEFINED CUDAToolkit_ROOT)
      set(CUDAToolkit_ROOT "${RECOMPDIAG_CUDA_ROOT}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS "${RECOMPDIAG_CUDA_ROOT}/bin/nvcc")
      set(CMAKE_CUDA_COMPILER "${RECOMPDIAG_CUDA_ROOT}/bin/nvcc")
    endif()
  endif()
  if(NOT RECOMPDIAG_TORCH_FROM_PATHS)  # set by RecompdiagTorchFromPython for a CUDA wheel
    find_package(Torch REQUIRED)
  endif()
  # TorchConfig's find_library calls search the system's folders before its own: with Debian's
  # libtorch-dev installed, a wheel's headers could meet Debian's libraries. Refuse that mix.
  get_filename_component(RECOMPDIAG_TORCH_LIBRARY_DIR "${TORCH_LIBRARY}" DIRECTORY)
  get_filename_component(RECOMPDIAG_TORCH_LIBRARY_DIR "${RECOMPDIAG_TORCH_LIBRARY_DIR}" REALPATH)
  get_filename_component(RECOMPDIAG_TORCH_PREFIX_REAL "${TORCH_INSTALL_PREFIX}" REALPATH)
  if(NOT RECOMPDIAG_TORCH_LIBRARY_DIR MATCHES "^${RECOMPDIAG_TORCH_PREFIX_REAL}/")
    message(FATAL_ERROR "recompdiag: LibTorch's config at ${TORCH_INSTALL_PREFIX} found the library "
      "${TORCH_LIBRARY} of another LibTorch; add ${TORCH_INSTALL_PREFIX} itself to "
      "CMAKE_PREFIX_PATH (scripts/setup --torch pypi does)")
  endif()
  # The CUDA caching allocator's statistics (the cuda_memory probe) need LibTorch's c10_cuda (an
  # imported target, or the library TorchConfig finds and appends to TORCH_LIBRARIES).
  if(TARGET c10_cuda OR C10_CUDA_LIBRARY)
    set(RECOMPDIAG_HAVE_CUDA_ALLOCATOR ON)
  else()
    set(RECOMPDIAG_HAVE_CUDA_ALLOCATOR OFF)
  endif()

  # Version-dependent LibTorch APIs, the C++ standard and Gloo: checked once (torch_features.h).
  include(RecompdiagTorchCompat)
else()
  set(RECOMPDIAG_HAVE_CUDA_ALLOCATOR OFF)
  set(RECOMPDIAG_HAVE_GLOO OFF)
  set(RECOMPDIAG_WHY_NO_GLOO "RECOMPDIAG_WITH_TORCH=OFF")
  set(RECOMPDIAG_HAVE_NCCL OFF)
  set(RECOMPDIAG_WHY_NO_NCCL "RECOMPDIAG_WITH_TORCH=OFF")
endif()

set(RECOMPDIAG_HAVE_CUPTI OFF)
set(RECOMPDIAG_HAVE_NVTX OFF)
set(RECOMPDIAG_HAVE_PROMETHEUS OFF)
set(RECOMPDIAG_WHY_NO_CUPTI "disabled by RECOMPDIAG_WITH_CUPTI=OFF")
set(RECOMPDIAG_WHY_NO_NVTX "disabled by RECOMPDIAG_WITH_NVTX=OFF")
set(RECOMPDIAG_WHY_NO_PROMETHEUS "disabled by RECOMPDIAG_WITH_PROMETHEUS=OFF")
# CUPTI and NVTX serve the probes only.
if(NOT RECOMPDIAG_WITH_TORCH)
  set(RECOMPDIAG_WITH_CUPTI OFF)
  set(RECOMPDIAG_WITH_NVTX OFF)
  set(RECOMPDIAG_WHY_NO_CUPTI "no probes: RECOMPDIAG_WITH_TORCH=OFF")
  set(RECOMPDIAG_WHY_NO_NVTX "no probes: RECOMPDIAG_WITH_TORCH=OFF")
endif()

if(RECOMPDIAG_WITH_CUPTI)
  find_path(RECOMPDIAG_CUPTI_INCLUDE_DIR cupti.h
            HINTS ${RECOMPDIAG_CUDA_ROOT}/include ${RECOMPDIAG_CUDA_ROOT}/extras/CUPTI/include)
  # A toolkit ships libcupti.so; the CUDA wheels (nvidia/cu13/lib) only the versioned name.
  find_library(RECOMPDIAG_CUPTI_LIBRARY NAMES cupti libcupti.so.13 libcupti.so.12
               HINTS ${RECOMPDIAG_CUDA_ROOT}/lib64 ${RECOMPDIAG_CUDA_ROOT}/extras/CUPTI/lib64
                     ${RECOMPDIAG_CUDA_ROOT}/lib)
  find_path(RECOMPDIAG_CUDART_INCLUDE_DIR cuda_runtime_api.h HINTS ${RECOMPDIAG_CUDA_ROOT}/include)
  if(RECOMPDIAG_CUPTI_INCLUDE_DIR AND RECOMPDIAG_CUPTI_LIBRARY AND RECOMPDIAG_CUDART_INCLUDE_DIR)
    set(RECOMPDIAG_HAVE_CUPTI ON)
  else()
    set(RECOMPDIAG_WHY_NO_CUPTI "cupti.h or libcupti not found under ${RECOMPDIAG_CUDA_ROOT}")
  endif()
endif()

if(RECOMPDIAG_WITH_NVTX)
  find_path(RECOMPDIAG_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${RECOMPDIAG_CUDA_ROOT}/include)
  if(RECOMPDIAG_NVTX3_INCLUDE_DIR)
    set(RECOMPDIAG_HAVE_NVTX ON)
  else()
    set(RECOMPDIAG_WHY_NO_NVTX "nvtx3/nvToolsExt.h not found under ${RECOMPDIAG_CUDA_ROOT}/include")
  endif()
endif()

if(RECOMPDIAG_WITH_PROMETHEUS)
  find_package(prometheus-cpp CONFIG QUIET)
  if(prometheus-cpp_FOUND AND TARGET prometheus-cpp::pull)
    set(RECOMPDIAG_HAVE_PROMETHEUS ON)
  else()
    set(RECOMPDIAG_WHY_NO_PROMETHEUS "prometheus-cpp (pull) not found; apt-get install prometheus-cpp-dev")
  endif()
endif()

# Warnings for our own targets only.
add_library(recompdiag_warnings INTERFACE)
target_compile_options(recompdiag_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
