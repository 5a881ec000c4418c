# The Python that subjects run in (FLCE_PYTHON: the venv set-up made) and, from its torch
# wheel's CMake package (torch.utils.cmake_prefix_path), libtorch for the one test that
# cross-checks the fp64 golden against libtorch autograd. flce itself links no torch and no
# Python: subjects run in a child process of that interpreter (oracles/subject_worker.hpp).
# Sets FLCE_HAVE_TORCH and FLCE_TORCH_VERSION; defines `flce_torch` (interface).
set(FLCE_HAVE_TORCH OFF)
if(NOT FLCE_PYTHON)
  message(STATUS "flce: FLCE_PYTHON not set: subjects run in python3 from PATH; torch tests disabled")
  set(FLCE_PYTHON_FOR_SUBJECTS python3)
  return()
endif()
set(FLCE_PYTHON_FOR_SUBJECTS ${FLCE_PYTHON})

execute_process(
  COMMAND ${FLCE_PYTHON} -c "import torch;print(torch.utils.cmake_prefix_path);print(torch.__version__)"
  OUTPUT_VARIABLE _flce_py_out RESULT_VARIABLE _flce_py_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _flce_py_rc EQUAL 0)
  message(FATAL_ERROR "flce: ${FLCE_PYTHON} cannot import torch")
endif()
string(REPLACE "\n" ";" _flce_py_lines "${_flce_py_out}")
list(GET _flce_py_lines 0 FLCE_TORCH_CMAKE_PREFIX)
list(GET _flce_py_lines 1 FLCE_TORCH_VERSION)
set(FLCE_HAVE_TORCH ON)
message(STATUS "flce: torch ${FLCE_TORCH_VERSION} from ${FLCE_TORCH_CMAKE_PREFIX}")

option(FLCE_LIBTORCH_TESTS "Build the golden-vs-libtorch-autograd test (links libtorch: minutes on 2 cores)" ON)
if(NOT FLCE_LIBTORCH_TESTS)
  return()
endif()
list(APPEND CMAKE_PREFIX_PATH ${FLCE_TORCH_CMAKE_PREFIX})
# The wheel's Caffe2 config looks for CUDA; on a CPU-only build host that is fine (nvcc exists)
# but we never need kineto/nvtx from it.
set(USE_KINETO OFF CACHE BOOL "" FORCE)
# Name the archs so Caffe2's config does not try to run a GPU-detection program.
if(NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)

add_library(flce_torch INTERFACE)
target_link_libraries(flce_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(flce_torch INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(flce_torch INTERFACE ${TORCH_CXX_FLAGS})
# The wheel's CUDA libraries (NCCL, cuDNN, ...) live in site-packages/nvidia/*/lib and are
# found at run time through torch's RPATH; at link time ld needs to be told where.
file(GLOB _flce_nvidia_libs "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib" "${TORCH_INSTALL_PREFIX}/../nvidia/cu*/lib")
foreach(_d ${_flce_nvidia_libs})
  target_link_options(flce_torch INTERFACE "-Wl,-rpath-link,${_d}")
endforeach()
target_link_options(flce_torch INTERFACE "-Wl,--allow-shlib-undefined")
