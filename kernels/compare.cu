#include "kernels/compare.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"

namespace flce {
namespace {

constexpr int kBlocks = 264, kThreads = 256;

struct Partial {
  double max_abs, max_ulp, sq_err, sq_ref;
  int64_t abs_i, ulp_i;
  int64_t nan_t, inf_t, nan_r, inf_r, mism;
};

__device__ Partial empty_partial() { return Partial{0, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0}; }

// Larger error wins; ties keep the smaller index, so the result is order-independent.
__device__ void take_max(double& v, int64_t& i, double v2, int64_t i2) {
  if (v2 > v || (v2 == v && i2 >= 0 && (i < 0 || i2 < i))) {
    v = v2;
    i = i2;
  }
}

__device__ void merge(Partial& a, const Partial& b) {
  take_max(a.max_abs, a.abs_i, b.max_abs, b.abs_i);
  take_max(a.max_ulp, a.ulp_i, b.max_ulp, b.ulp_i);
  a.sq_err += b.sq_err;
  a.sq_ref += b.sq_ref;
  a.nan_t += b.nan_t, a.inf_t += b.inf_t, a.nan_r += b.nan_r, a.inf_r += b.inf_r, a.mism += b.mism;
}

// Spacing of dtype d at |r| (subnormal spacing below the smallest normal).
__device__ double ulp_at(double r, DType d) {
  int p = 53, emin = -1022;
  switch (d) {
    case DType::F32: p = 24, emin = -126; break;
    case DType::F16: p = 11, emin = -14; break;
    case DType::BF16: p = 8, emin = -126; break;
    case DType::I64: return 1.0;
    default: break;
  }
  int e = 0;
  if (r != 0.0) {
    frexp(fabs(r), &e);
    e -= 1;  // |r| in [2^e, 2^(e+1))
  }
  if (r == 0.0 || e < emin) e = emin;
  return ldexp(1.0, e - (p - 1));
}

__device__ void visit(Partial& p, double t, double r, int64_t i, DType ulp_dtype) {
  bool tn = isnan(t), rn = isnan(r), ti = isinf(t), ri = isinf(r);
  p.nan_t += tn, p.inf_t += ti, p.nan_r += rn, p.inf_r += ri;
  if (tn != rn || ((ti || ri) && !tn && !rn && t != r)) ++p.mism;
  if (tn || rn || ti || ri) return;
  double e = fabs(t - r);
  take_max(p.max_abs, p.abs_i, e, i);
  take_max(p.max_ulp, p.ulp_i, e / ulp_at(r, ulp_dtype), i);
  p.sq_err += e * e;
  p.sq_ref += r * r;
}

__device__ Partial block_merge(Partial p, Partial* sh) {
  sh[threadIdx.x] = p;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) merge(sh[threadIdx.x], sh[threadIdx.x + w]);
    __syncthreads();
  }
  return sh[0];
}

__global__ void compare_partial_kernel(const void* test, DType td, const double* ref, int64_t n, DType ud,
                                       Partial* out) {
  __shared__ Partial sh[kThreads];
  Partial p = empty_partial();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    visit(p, load_as_f64(test, td, i), ref[i], i, ud);
  p = block_merge(p, sh);
  if (threadIdx.x == 0) out[blockIdx.x] = p;
}

__global__ void compare_final_kernel(const Partial* parts, int nparts, Partial* out) {
  __shared__ Partial sh[kThreads];
  Partial p = empty_partial();
  for (int i = threadIdx.x; i < nparts; i += blockDim.x) merge(p, parts[i]);
  p = block_merge(p, sh);
  if (threadIdx.x == 0) *out = p;
}

}  // namespace

CompareStats compare_to_f64(const void* test, DType td, const double* ref, int64_t n, DType ud, cudaStream_t s,
                            const std::string& ctx) {
  CompareStats st;
  st.n = n;
  if (n <= 0) return st;
  DeviceBuffer parts(sizeof(Partial) * (kBlocks + 1), s, ctx);
  auto* pp = parts.as<Partial>();
  compare_partial_kernel<<<kBlocks, kThreads, 0, s>>>(test, td, ref, n, ud, pp);
  FLCE_CUDA_CHECK_LAUNCH("compare_partial_kernel", ctx);
  compare_final_kernel<<<1, kThreads, 0, s>>>(pp, kBlocks, pp + kBlocks);
  FLCE_CUDA_CHECK_LAUNCH("compare_final_kernel", ctx);
  Partial h{};
  FLCE_CUDA_CHECK(cudaMemcpyAsync(&h, pp + kBlocks, sizeof(Partial), cudaMemcpyDeviceToHost, s), ctx);
  FLCE_CUDA_CHECK(cudaStreamSynchronize(s), ctx);
  st.max_abs_err = h.max_abs;
  st.max_abs_index = h.abs_i;
  st.max_ulp = h.max_ulp;
  st.max_ulp_index = h.ulp_i;
  if (h.sq_ref > 0)
    st.rel_frobenius = std::sqrt(h.sq_err / h.sq_ref);
  else
    st.rel_frobenius = h.sq_err > 0 ? INFINITY : 0.0;
  st.nan_test = h.nan_t, st.inf_test = h.inf_t, st.nan_ref = h.nan_r, st.inf_ref = h.inf_r;
  st.nonfinite_mismatch = h.mism;
  return st;
}

std::string to_string(const CompareStats& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "n=%lld max_abs=%.6g@%lld max_ulp=%.4g@%lld rel_fro=%.6g nan(t/r)=%lld/%lld inf(t/r)=%lld/%lld "
                "nonfinite_mismatch=%lld",
                (long long)s.n, s.max_abs_err, (long long)s.max_abs_index, s.max_ulp, (long long)s.max_ulp_index,
                s.rel_frobenius, (long long)s.nan_test, (long long)s.nan_ref, (long long)s.inf_test,
                (long long)s.inf_ref, (long long)s.nonfinite_mismatch);
  return buf;
}

}  // namespace flce
