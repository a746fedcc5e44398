# A pip build of the Python package (scikit-build-core sets SKBUILD): the LibTorch to build against
# is the one of the torch the target interpreter imports: its headers, libraries and C++ ABI, and,
# for a CUDA wheel, the CUDA headers and libraries its nvidia-* packages carry (CUPTI, NVTX, the
# runtime's headers for the CUDA allocator's probe).
#
# A CUDA wheel's TorchConfig enables CMake's CUDA language and stops when the machine's nvcc is
# missing or of another version than the wheel's CUDA headers, though nothing here compiles CUDA
# code: PyTorch's own cpp_extension builds CPU extensions against the same wheels without any CUDA
# compiler. So, as cpp_extension does, a CUDA wheel's LibTorch is taken from its paths
# (RECOMPDIAG_TORCH_FROM_PATHS: RecompdiagDependencies then skips find_package(Torch)); a CPU torch
# (Debian's python3-torch, a CPU wheel) goes through its TorchConfig, which asks for no CUDA.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c "import os, torch, torch.utils
nvidia = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), 'nvidia', 'cu13')
print(os.path.dirname(torch.__file__), torch.utils.cmake_prefix_path, int(torch._C._GLIBCXX_USE_CXX11_ABI), nvidia if os.path.isdir(nvidia) else '', torch.version.cuda or '', torch.__version__.split('+')[0], sep=';')"
  OUTPUT_VARIABLE recompdiag_torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE recompdiag_torch_found ERROR_QUIET)
if(NOT recompdiag_torch_found EQUAL 0)
  message(FATAL_ERROR "recompdiag: ${Python3_EXECUTABLE} cannot import torch: install torch first, "
                      "and build with pip install --no-build-isolation ./python")
endif()
list(GET recompdiag_torch_info 0 recompdiag_torch_root)
list(GET recompdiag_torch_info 1 recompdiag_torch_cmake)
list(GET recompdiag_torch_info 2 recompdiag_torch_abi)
list(GET recompdiag_torch_info 3 recompdiag_torch_cuda)
list(GET recompdiag_torch_info 4 recompdiag_torch_cuda_version)
list(GET recompdiag_torch_info 5 recompdiag_torch_version)
add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${recompdiag_torch_abi})
if(recompdiag_torch_cuda)
  set(RECOMPDIAG_CUDA_ROOT "${recompdiag_torch_cuda}" CACHE PATH "" FORCE)
endif()

if(NOT recompdiag_torch_cuda_version)
  list(PREPEND CMAKE_PREFIX_PATH "${recompdiag_torch_root}" "${recompdiag_torch_cmake}")
  return()
endif()

# A CUDA wheel: what TorchConfig would give, from the wheel's own folders.
set(RECOMPDIAG_TORCH_FROM_PATHS ON)
set(Torch_FOUND TRUE)
set(Torch_VERSION "${recompdiag_torch_version}")
set(TORCH_INSTALL_PREFIX "${recompdiag_torch_root}")
set(TORCH_INCLUDE_DIRS "${recompdiag_torch_root}/include"
                       "${recompdiag_torch_root}/include/torch/csrc/api/include")
set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=${recompdiag_torch_abi}")
set(recompdiag_torch_libs)
foreach(lib torch torch_cpu c10 torch_cuda c10_cuda)
  find_library(RECOMPDIAG_TORCH_LIB_${lib} ${lib} PATHS "${recompdiag_torch_root}/lib"
               NO_DEFAULT_PATH NO_CACHE)
  if(RECOMPDIAG_TORCH_LIB_${lib})
    list(APPEND recompdiag_torch_libs "${RECOMPDIAG_TORCH_LIB_${lib}}")
  elseif(lib MATCHES "^(torch|torch_cpu|c10)$")
    message(FATAL_ERROR "recompdiag: the torch at ${recompdiag_torch_root} has no lib${lib}.so")
  endif()
endforeach()
set(TORCH_LIBRARY "${RECOMPDIAG_TORCH_LIB_torch}")
# One imported target, as TorchConfig's `torch`: its headers, ABI flag and libraries travel with
# whatever links it.
add_library(torch INTERFACE IMPORTED)
set_target_properties(torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_COMPILE_OPTIONS "-D_GLIBCXX_USE_CXX11_ABI=${recompdiag_torch_abi}"
  INTERFACE_LINK_LIBRARIES "${recompdiag_torch_libs}")
set(TORCH_LIBRARIES torch)
# The CUDA allocator's probe: c10_cuda, and the CUDA runtime's headers c10/cuda includes.
if(RECOMPDIAG_TORCH_LIB_c10_cuda)
  set(C10_CUDA_LIBRARY "${RECOMPDIAG_TORCH_LIB_c10_cuda}")
  set(CUDAToolkit_INCLUDE_DIRS "${RECOMPDIAG_CUDA_ROOT}/include")
endif()
