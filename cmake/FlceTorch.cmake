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
find_package(Torch REQUIRED)
set(Python3_EXECUTABLE ${FLCE_PYTHON})
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)

# Interface target for the few translation units that include torch headers.
add_library(flce_torch INTERFACE)
target_link_libraries(flce_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(flce_torch INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(flce_torch INTERFACE ${TORCH_CXX_FLAGS})
find_library(FLCE_TORCH_PYTHON_LIB torch_python PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH REQUIRED)

add_library(flce_python STATIC
  oracles/python_host.cpp
)
target_link_libraries(flce_python PUBLIC flce_core flce_torch ${FLCE_TORCH_PYTHON_LIB} Python3::Python)
target_compile_options(flce_python PRIVATE ${FLCE_WARNINGS})
get_filename_component(_flce_venv_bin ${FLCE_PYTHON} DIRECTORY)
target_compile_definitions(flce_python PUBLIC
  FLCE_PYTHON_EXECUTABLE="${FLCE_PYTHON}"
  FLCE_SUBJECTS_DIR="${CMAKE_SOURCE_DIR}/subjects"
  FLCE_TORCH_VERSION="${FLCE_TORCH_VERSION}")
