# A pip build of the Python package (scikit-build-core sets SKBUILD): the LibTorch to build against
# is the one of the torch the target interpreter imports, as scripts/setup --torch pypi finds it:
# its CMake prefix, its C++ ABI and, for a CUDA wheel, the CUDA Toolkit its nvidia-* packages carry.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c "import os, torch, torch.utils
nvidia = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), 'nvidia', 'cu13')
print(os.path.dirname(torch.__file__), torch.utils.cmake_prefix_path, int(torch._C._GLIBCXX_USE_CXX11_ABI), nvidia if os.path.isdir(nvidia) else '', sep=';')"
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
list(PREPEND CMAKE_PREFIX_PATH "${recompdiag_torch_root}" "${recompdiag_torch_cmake}")
add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${recompdiag_torch_abi})
if(recompdiag_torch_cuda)
  set(RECOMPDIAG_CUDA_ROOT "${recompdiag_torch_cuda}" CACHE PATH "" FORCE)
endif()
