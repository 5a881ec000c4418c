// GEMMs that follow DTYPE_OUT_CONTRACT.md: fp32 accumulation, one rounding into the
// output dtype, beta*C accumulation, strided batches. Row-major interface; the
// column-major mapping for cuBLASLt happens inside.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "case/dtype.hpp"

namespace flce {

// Row-major: D[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C[M,N], for each batch.
struct GemmDesc {
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;  // A is stored as [K, M] (row-major) instead of [M, K]
  bool trans_b = false;  // B is stored as [N, K] instead of [K, N]
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;  // row strides of the stored matrices, elements
  DType ab_type = DType::BF16;  // dtype of A and B
  DType cd_type = DType::F32;   // dtype of C and D
  float alpha = 1.0f, beta = 0.0f;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;  // elements between batches
  bool allow_tf32 = false;  // fp32 operands only; breaks the contract's exact products
};

inline constexpr size_t kGemmWorkspaceBytes = size_t(32) << 20;  // Hopper's recommended size

// True when cuBLASLt computes this (operand, output) pair directly (contract item 3).
bool dtype_out_supported(DType ab, DType cd);

// One cuBLASLt handle per thread and device, created on first use and kept for the
// process (destroying it at exit could race the CUDA context teardown).
cublasLtHandle_t default_lt_handle();

// D = round_cd(beta*C + alpha*A@B). C may equal D (in-place accumulation); with beta == 0,
// C may be null. Throws on unsupported pairs, with `context` in the message.
void gemm_dtype_out(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B, const void* C,
                    void* D, cudaStream_t stream, void* workspace, size_t workspace_bytes,
                    const std::string& context = "");

// Any (operand, output) pair: fp32 accumulator into `stage` (batch*M*N floats, dense),
// then an elementwise round_cd(beta*C + alpha*stage). Same arithmetic, more memory.
void gemm_dtype_out_staged(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B,
                           const void* C, void* D, float* stage, cudaStream_t stream, void* workspace,
                           size_t workspace_bytes, const std::string& context = "");

// Picks the direct path when supported, else the staged one (stage must then be given).
void gemm_any_out(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B, const void* C,
                  void* D, float* stage, cudaStream_t stream, void* workspace, size_t workspace_bytes,
                  const std::string& context = "");

}  // namespace flce
