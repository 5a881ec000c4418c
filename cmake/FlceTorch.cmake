# libtorch from the pip wheel's CMake package (torch.utils.cmake_prefix_path) and the
# embedded CPython of the same interpreter. Defines `flce_torch` (interface) and
# `flce_python` (the subject oracle host) when FLCE_PYTHON is set.
if(NOT FLCE_PYTHON)
  message(STATUS "flce: FLCE_PYTHON not set: torch/Python oracles disabled")
  return()
endif()

execute_process(
  COMMAND ${FLCE_PYTHON} -c "import torch,sys,sysconfig;print(torch.utils.cmake_prefix_path);print(torch.__version__);print(sysconfig.get_paths()['include']);print(sys.prefix)"
  OUTPUT_VARIABLE _flce_py_out RESULT_VARIABLE _flce_py_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _flce_py_rc EQUAL 0)
  message(FATAL_ERROR "flce: ${FLCE_PYTHON} cannot import torch")
endif()
string(REPLACE "\n" ";" _flce_py_lines "${_flce_py_out}")
list(GET _flce_py_lines 0 FLCE_TORCH_CMAKE_PREFIX)
list(GET _flce_py_lines 1 FLCE_TORCH_VERSION)
message(STATUS "flce: torch ${FLCE_TORCH_VERSION} from ${FLCE_TORCH_CMAKE_PREFIX}")

list(APPEND CMAKE_PREFIX_PATH ${FLCE_TORCH_CMAKE_PREFIX})
# The wheel's Caffe2 config looks for CUDA; on a CPU-only build host that is fine (nvcc exists)
# but we never need kineto/nvtx from it.
set(USE_KINETO OFF CACHE BOOL "" FORCE)
# Name the archs so Caffe2's config does not try to run a GPU-detection program.
if(NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)
set(Python3_EXECUTABLE ${FLCE_PYTHON})
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)

# Interface target for the few translation units that include torch headers.
add_library(flce_torch INTERFACE)
target_link_libraries(flce_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(flce_torch INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(flce_torch INTERFACE ${TORCH_CXX_FLAGS})
find_library(FLCE_TORCH_PYTHON_LIB torch_python PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH REQUIRED)

# The wheel's CUDA libraries (NCCL, cuDNN, ...) live in site-packages/nvidia/*/lib and are
# found at run time through torch's RPATH; at link time ld needs to be told where.
file(GLOB _flce_nvidia_libs "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib" "${TORCH_INSTALL_PREFIX}/../nvidia/cu*/lib")
foreach(_d ${_flce_nvidia_libs})
  target_link_options(flce_torch INTERFACE "-Wl,-rpath-link,${_d}")
endforeach()
target_link_options(flce_torch INTERFACE "-Wl,--allow-shlib-undefined")
# The host must share libstdc++ (shared) with libtorch: a toolchain that links libstdc++.a
# statically (the GPU box's /opt/gcc g++) leaves a second C++ exception runtime in the
# executable that interposes libtorch's, and every exception caught inside torch then
# reads as null ("e_ptr INTERNAL ASSERT FAILED"). Refuse such a toolchain up front. Necessary,
# not sufficient: built with the box's system g++ the embedded host still shows the defect
# there (scripts/gpu_run.sh works around it; BENCHMARKS.md has the measurements).
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so OUTPUT_VARIABLE _flce_libstdcxx
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${_flce_libstdcxx}" OR NOT EXISTS "${_flce_libstdcxx}")
  message(FATAL_ERROR "flce: ${CMAKE_CXX_COMPILER} has no shared libstdc++ (${_flce_libstdcxx}); the embedded "
                      "Python host must share libtorch's C++ runtime. Use the system g++ (-DCMAKE_CXX_COMPILER=/usr/bin/g++).")
endif()

# python_host.cpp is the one TU with torch + pybind11 headers (torch ships its own fmt
# headers, so this TU must not use Debian's fmt). differential.cpp sees only the
# torch-free python_host.hpp.
add_library(flce_python_host STATIC oracles/python_host.cpp)
# PRIVATE: torch include dirs (with their own fmt) must not leak into other targets.
target_link_libraries(flce_python_host PRIVATE flce_torch ${FLCE_TORCH_PYTHON_LIB} Python3::Python nlohmann_json::nlohmann_json)
target_include_directories(flce_python_host PUBLIC ${CMAKE_SOURCE_DIR})
target_compile_options(flce_python_host PRIVATE ${FLCE_WARNINGS})
# Keep the host's pybind11 state apart from torch._C's: the host needs none of torch's
# bound types (tensors cross through THPVariable_Wrap/Unpack), and sharing the internals
# with a torch built by the same compiler ABI broke C++ exception translation inside torch
# (torch 2.11, g++ 13: "e_ptr INTERNAL ASSERT FAILED" for every error raised in an op).
target_compile_definitions(flce_python_host PRIVATE PYBIND11_COMPILER_TYPE="_flce_embedded_host")
add_library(flce_python STATIC oracles/differential.cpp oracles/campaign.cpp oracles/repro.cpp oracles/gate.cpp oracles/subject_worker.cpp
            oracles/matrix.cpp oracles/campaign_state.cpp oracles/campaign_report.cpp oracles/campaign_worker.cpp oracles/campaign_shrink.cpp
            oracles/worker_process.cpp oracles/minimize.cpp oracles/campaign_merge.cpp)
target_link_libraries(flce_python PUBLIC flce_core flce_python_host)
target_compile_options(flce_python PRIVATE ${FLCE_WARNINGS})
get_filename_component(_flce_venv_bin ${FLCE_PYTHON} DIRECTORY)
target_compile_definitions(flce_python_host PUBLIC
  FLCE_PYTHON_EXECUTABLE="${FLCE_PYTHON}"
  FLCE_SUBJECTS_DIR="${CMAKE_SOURCE_DIR}/subjects"
  FLCE_TORCH_VERSION="${FLCE_TORCH_VERSION}")
