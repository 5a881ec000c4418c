#include "kernels/dtype_out_gemm.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"

namespace flce {
namespace {

cudaDataType_t lt_type(DType d, const std::string& ctx) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: throw std::runtime_error("gemm_dtype_out: dtype " + std::string(dtype_name(d)) +
                                      " is not a GEMM dtype [context: " + ctx + "]");
  }
}

// Largest power of two (<= 256) dividing the address and every byte stride: cuBLASLt's
// heuristic otherwise assumes 256-byte alignment and may pick a kernel that faults.
uint32_t alignment(const void* p, int64_t ld, int64_t stride, int64_t batch, size_t es) {
  uint64_t a = 256;
  auto fold = [&](uint64_t v) {
    if (v == 0) return;
    uint64_t low = v & (~v + 1);
    if (low < a) a = low;
  };
  fold(reinterpret_cast<uintptr_t>(p));
  fold(static_cast<uint64_t>(ld) * es);
  if (batch > 1) fold(static_cast<uint64_t>(stride) * es);
  return static_cast<uint32_t>(a);
}

// RAII for the Lt descriptor objects so an exception cannot leak them.
struct LtObjects {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtObjects() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void set_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride, const std::string& ctx) {
  if (batch <= 1) return;
  int32_t count = static_cast<int32_t>(batch);
  FLCE_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                    ctx);
  FLCE_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)), ctx);
}

std::string describe(const GemmDesc& g) {
  return "gemm M=" + std::to_string(g.M) + " N=" + std::to_string(g.N) + " K=" + std::to_string(g.K) +
         " batch=" + std::to_string(g.batch) + " ta=" + std::to_string(g.trans_a) +
         " tb=" + std::to_string(g.trans_b) + " lda=" + std::to_string(g.lda) + " ldb=" + std::to_string(g.ldb) +
         " ldd=" + std::to_string(g.ldd) + " ab=" + std::string(dtype_name(g.ab_type)) +
         " cd=" + std::string(dtype_name(g.cd_type)) + " beta=" + std::to_string(g.beta);
}

__global__ void staged_epilogue_kernel(const float* stage, const void* C, void* D, DType cd, int64_t M, int64_t N,
                                       int64_t ldc, int64_t ldd, int64_t stride_c, int64_t stride_d, int64_t batch,
                                       float alpha, float beta) {
  const int64_t total = batch * M * N;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t b = idx / (M * N), r = (idx / N) % M, c = idx % N;
    float acc = alpha * stage[idx];
    if (beta != 0.0f) acc = fmaf(beta, load_as_f32(C, cd, b * stride_c + r * ldc + c), acc);
    store_from_f32(D, cd, b * stride_d + r * ldd + c, acc);
  }
}

}  // namespace

bool dtype_out_supported(DType ab, DType cd) {
  if (ab == cd) return ab == DType::F32 || ab == DType::F16 || ab == DType::BF16;
  return cd == DType::F32 && (ab == DType::F16 || ab == DType::BF16);
}

cublasLtHandle_t default_lt_handle() {
  static thread_local std::map<int, cublasLtHandle_t> handles;
  int dev = 0;
  FLCE_CUDA_CHECK(cudaGetDevice(&dev), "default_lt_handle");
  auto it = handles.find(dev);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  FLCE_CUBLAS_CHECK(cublasLtCreate(&h), "default_lt_handle device " + std::to_string(dev));
  handles[dev] = h;
  return h;
}

void gemm_dtype_out(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B, const void* C,
                    void* D, cudaStream_t stream, void* workspace, size_t workspace_bytes,
                    const std::string& context) {
  const std::string ctx = describe(g) + "; " + context;
  if (!dtype_out_supported(g.ab_type, g.cd_type))
    throw std::runtime_error("gemm_dtype_out: unsupported operand/output pair (use gemm_dtype_out_staged) [" +
                             ctx + "]");
  if (g.M <= 0 || g.N <= 0 || g.batch <= 0) return;
  if (g.beta == 0.0f || C == nullptr) C = D;  // Lt wants a C descriptor/pointer even when unused
  const cudaDataType_t ab = lt_type(g.ab_type, ctx), cd = lt_type(g.cd_type, ctx);
  const size_t es_ab = g.ab_type == DType::F32 ? 4 : 2, es_cd = g.cd_type == DType::F32 ? 4 : 2;

  // Row-major D[M,N] = op(A) op(B) is column-major D^T[N,M] = op(B)^T op(A)^T, so Lt's
  // "A" is our B and Lt's "B" is our A; a stored row-major [r,c] is column-major [c,r].
  LtObjects o;
  cublasComputeType_t compute =
      (g.allow_tf32 && g.ab_type == DType::F32) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  FLCE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&o.op, compute, CUDA_R_32F), ctx);
  cublasOperation_t opa = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opb = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  FLCE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(o.op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(o.op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)), ctx);

  const uint64_t M = g.M, N = g.N, K = g.K;
  FLCE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&o.a, ab, g.trans_b ? K : N, g.trans_b ? N : K, g.ldb), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&o.b, ab, g.trans_a ? M : K, g.trans_a ? K : M, g.lda), ctx);
  const int64_t ldc_eff = (C == D) ? g.ldd : (g.ldc ? g.ldc : g.ldd);
  const int64_t strc_eff = (C == D) ? g.stride_d : g.stride_c;
  FLCE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&o.c, cd, N, M, ldc_eff), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&o.d, cd, N, M, g.ldd), ctx);
  set_batch(o.a, g.batch, g.stride_b, ctx);
  set_batch(o.b, g.batch, g.stride_a, ctx);
  set_batch(o.c, g.batch, strc_eff, ctx);
  set_batch(o.d, g.batch, g.stride_d, ctx);

  FLCE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&o.pref), ctx);
  uint64_t ws = workspace ? workspace_bytes : 0;
  FLCE_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), ctx);
  uint32_t al_a = alignment(B, g.ldb, g.stride_b, g.batch, es_ab);  // Lt's A is our B
  uint32_t al_b = alignment(A, g.lda, g.stride_a, g.batch, es_ab);
  uint32_t al_c = alignment(C, ldc_eff, strc_eff, g.batch, es_cd);
  uint32_t al_d = alignment(D, g.ldd, g.stride_d, g.batch, es_cd);
  FLCE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                         sizeof(al_a)), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                         sizeof(al_b)), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c,
                                                         sizeof(al_c)), ctx);
  FLCE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d,
                                                         sizeof(al_d)), ctx);

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  FLCE_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, o.op, o.a, o.b, o.c, o.d, o.pref, 1, &result, &found),
                    ctx);
  if (found == 0) throw std::runtime_error("gemm_dtype_out: cuBLASLt found no algorithm [" + ctx + "]");

  float alpha = g.alpha, beta = g.beta;
  FLCE_CUBLAS_CHECK(cublasLtMatmul(handle, o.op, &alpha, B, o.a, A, o.b, &beta, C, o.c, D, o.d, &result.algo,
                                   workspace, ws, stream),
                    ctx);
}

void gemm_dtype_out_staged(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B,
                           const void* C, void* D, float* stage, cudaStream_t stream, void* workspace,
                           size_t workspace_bytes, const std::string& context) {
  if (stage == nullptr) throw std::runtime_error("gemm_dtype_out_staged: no staging buffer [" + context + "]");
  if (g.M <= 0 || g.N <= 0 || g.batch <= 0) return;
  GemmDesc s = g;
  s.cd_type = DType::F32;
  s.alpha = 1.0f;
  s.beta = 0.0f;
  s.ldc = s.ldd = g.N;
  s.stride_c = s.stride_d = g.M * g.N;
  gemm_dtype_out(handle, s, A, B, nullptr, stage, stream, workspace, workspace_bytes, context + " (staged)");
  const int64_t total = g.batch * g.M * g.N;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, 65535 * 8);
  staged_epilogue_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      stage, C, D, g.cd_type, g.M, g.N, g.ldc ? g.ldc : g.ldd, g.ldd, g.stride_c, g.stride_d, g.batch, g.alpha,
      g.beta);
  FLCE_CUDA_CHECK_LAUNCH("staged_epilogue_kernel", context);
}

void gemm_any_out(cublasLtHandle_t handle, const GemmDesc& g, const void* A, const void* B, const void* C,
                  void* D, float* stage, cudaStream_t stream, void* workspace, size_t workspace_bytes,
                  const std::string& context) {
  if (dtype_out_supported(g.ab_type, g.cd_type))
    gemm_dtype_out(handle, g, A, B, C, D, stream, workspace, workspace_bytes, context);
  else
    gemm_dtype_out_staged(handle, g, A, B, C, D, stage, stream, workspace, workspace_bytes, context);
}

}  // namespace flce
