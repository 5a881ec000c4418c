// Whether a usable CUDA device exists (tests skip instead of failing on CPU machines).
#pragma once
#include <cuda_runtime.h>

namespace flce {

inline bool has_cuda_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls are not poisoned
    return false;
  }
  return n > 0;
}

}  // namespace flce
