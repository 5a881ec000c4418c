// Device <-> host copies of whole tensors, for small cases and tests. Large tensors
// should stay on the device (compare.hpp).
#pragma once
#include <cuda_runtime.h>

#include "kernels/device_buffer.hpp"
#include "case/outputs.hpp"

namespace flce {

// Synchronizes `stream`; values widened to double, dtype kept.
Tensor64 tensor_to_host(const DeviceTensor& t, cudaStream_t stream = nullptr);

// A Tensor64 (e.g. the golden oracle's) as a device fp64 tensor, for compare_to_f64.
DeviceTensor upload_f64(const Tensor64& t, cudaStream_t stream = nullptr);

}  // namespace flce
