// GPU-side comparison of a device tensor (any dtype) with a device fp64 reference of
// the same numel: no host copies of large tensors, deterministic (two-stage reduction).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/device_buffer.hpp"
#include "case/dtype.hpp"

namespace flce {

struct CompareStats {
  int64_t n = 0;
  // Over positions where both values are finite:
  double max_abs_err = 0;     // max |test - ref|
  int64_t max_abs_index = -1;
  double max_ulp = 0;         // max |test - ref| / ulp_d(ref), ulp in the tested dtype d (fractional)
  int64_t max_ulp_index = -1;
  double rel_frobenius = 0;   // ||test - ref||_2 / ||ref||_2 (0 when both are 0; inf when only ref is 0)
  // Non-finite bookkeeping over all positions:
  int64_t nan_test = 0, inf_test = 0, nan_ref = 0, inf_ref = 0;
  int64_t nonfinite_mismatch = 0;  // NaN in one but not the other, or an Inf not equal (sign) to the other
};

// `ulp_dtype`: dtype whose ulp measures the error (normally the tested dtype; fp64 or
// int64 tensors measure in units of 1 ulp of fp64 / 1).
CompareStats compare_to_f64(const void* test, DType test_dtype, const double* ref, int64_t n, DType ulp_dtype,
                            cudaStream_t stream, const std::string& context = "");

inline CompareStats compare_to_f64(const DeviceTensor& test, const DeviceTensor& ref, cudaStream_t stream,
                                   const std::string& context = "") {
  return compare_to_f64(test.data(), test.dtype, static_cast<const double*>(ref.data()), test.numel(), test.dtype,
                        stream, context);
}

std::string to_string(const CompareStats& s);

}  // namespace flce
