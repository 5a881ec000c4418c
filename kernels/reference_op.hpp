// Op-level reference for the aten dtype_out family: out[b] = C[b] + A[b] @ B[b]
// (mm/bmm without C), A [V, BT] and B [BT, H] in input_dtype, C [V, H] and out in
// case.op_out_dtype(), following DTYPE_OUT_CONTRACT.md. Result tensor "out":
// [V, H] (mm/addmm) or [batch, V, H] (bmm/baddbmm).
#pragma once
#include <cuda_runtime.h>

#include "kernels/reference_flce.hpp"

namespace flce {

ReferenceResult reference_op_cuda(const Case& c, const DeviceInputs& in, cudaStream_t stream = nullptr,
                                  bool allow_tf32 = false);

}  // namespace flce
