// Turns the per-row double results of the CE kernel into the output tensors: scalars
// (mean/sum: one deterministic double sum, one rounding) or per-token (none).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/ce_rows.hpp"
#include "case/dtype.hpp"

namespace flce {

struct CeFinalizeArgs {
  const double* loss_row = nullptr;
  const double* z_row = nullptr;
  const float* acc_row = nullptr;
  const CeNorms* norms = nullptr;
  int64_t BT = 0;
  bool reduce = true;         // mean/sum -> scalars; none -> per token
  bool nan_if_empty = false;  // torch semantics: a mean over no rows is NaN
  void* loss_out = nullptr;   // loss_dtype
  DType loss_dtype = DType::F32;
  void* z_out = nullptr;      // z_dtype, may be null
  DType z_dtype = DType::F32;
  float* acc_out = nullptr;   // fp32, may be null
};

void launch_ce_finalize(const CeFinalizeArgs& a, cudaStream_t stream, const std::string& context);

}  // namespace flce
