// Small elementwise/reduction kernels the reference needs around its GEMMs.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/device_buffer.hpp"
#include "case/dtype.hpp"

namespace flce {

// dst[i] = round_dst(src[i]) for n elements (one rounding, also from F64).
void cast_elements(const void* src, DType src_dtype, void* dst, DType dst_dtype, int64_t n, cudaStream_t stream,
                   const std::string& context);

// New tensor holding `t` converted to `dtype` (same shape).
DeviceTensor cast_tensor(const DeviceTensor& t, DType dtype, cudaStream_t stream, const std::string& context);

// Rewrites an fp32 buffer of n elements as n 2-byte `to` values at its start, without a
// second n-sized buffer: the first slice goes through a small temporary, later slices
// only overwrite fp32 elements that earlier launches have already read.
void narrow_f32_in_place(void* buf, int64_t n, DType to, cudaStream_t stream, const std::string& context);

// acc[j] = round_acc(acc[j] + sum_i G[i, j]), i < rows, j < cols; the column sum is in
// double, so the accumulator rounds once per call (same contract as the GEMMs).
void colsum_accumulate(const void* G, DType g_dtype, int64_t rows, int64_t cols, int64_t ldg, void* acc,
                       DType acc_dtype, cudaStream_t stream, const std::string& context);

// Logits as an implementation that materializes them in the operand dtype `to` holds them
// (Liger: logits = x @ W^T in bf16, then + bias in bf16): z = round_to(round_to(z) + bias)
// over rows x V fp32 elements (row stride ld). bias: [V] fp32 or null. No-op for fp32.
void round_logits_in_place(float* z, int64_t rows, int64_t V, int64_t ld, const float* bias, DType to,
                           cudaStream_t stream, const std::string& context);

}  // namespace flce
