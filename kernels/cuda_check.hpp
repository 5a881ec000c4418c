// Error checks for every CUDA runtime and cuBLAS(Lt) call. A failure throws
// std::runtime_error naming the call, where it was made, the library's own error
// text and a context string (the case's id or JSON) so a failing case can be replayed.
// `context` is evaluated only on failure, so it may be an expensive expression.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace flce::detail {

[[noreturn]] inline void cuda_fail(const char* call, const char* file, int line, const std::string& err,
                                   std::string_view context) {
  std::string msg = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + err;
  if (!context.empty()) msg += " [context: " + std::string(context) + "]";
  throw std::runtime_error(msg);
}

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

inline std::string cublas_error_text(cublasStatus_t s) {
  return std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")";
}

}  // namespace flce::detail

#define FLCE_CUDA_CHECK(call, context)                                                                  \
  do {                                                                                                  \
    cudaError_t flce_err_ = (call);                                                                     \
    if (flce_err_ != cudaSuccess)                                                                       \
      ::flce::detail::cuda_fail(#call, __FILE__, __LINE__, ::flce::detail::cuda_error_text(flce_err_), \
                                (context));                                                             \
  } while (0)

// cublasLt returns cublasStatus_t as well, so one macro covers cuBLAS and cuBLASLt.
#define FLCE_CUBLAS_CHECK(call, context)                                                                    \
  do {                                                                                                      \
    cublasStatus_t flce_st_ = (call);                                                                       \
    if (flce_st_ != CUBLAS_STATUS_SUCCESS)                                                                  \
      ::flce::detail::cuda_fail(#call, __FILE__, __LINE__, ::flce::detail::cublas_error_text(flce_st_),    \
                                (context));                                                                 \
  } while (0)

// After a <<<>>> launch: catches bad configurations (grid, shared memory) right away;
// asynchronous faults surface at the next synchronizing call's check.
#define FLCE_CUDA_CHECK_LAUNCH(kernel_name, context) FLCE_CUDA_CHECK(cudaGetLastError(), std::string(kernel_name) + " launch; " + std::string(context))
