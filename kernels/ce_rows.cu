#include "kernels/ce_rows.hpp"

#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/block_reduce.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"

namespace flce {
namespace {

constexpr int kThreads = 1024;  // one block per row; 32 warps keep enough loads in flight
constexpr int kUnroll = 4;      // tiles loaded before use, for memory-level parallelism

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// Per-thread partial state of pass 1, mergeable in any tree order.
struct RowStats {
  float m;         // max over j != y of c_j
  float s;         // sum over j != y of exp(c_j - m)
  float best_v;    // argmax value: first index of the maximum, NaN never wins (as golden.cpp)
  int64_t best_i;  // INT64_MAX: none yet (all NaN or -inf -> prediction 0)
  double wc;       // sum_j w_j c_j (label smoothing only)
};

struct RowCoef {
  float M, inv_d, A, K, gy;
};

__device__ __forceinline__ float capped(float z, float cap) { return cap > 0.f ? cap * tanhf(z / cap) : z; }
// 1 - tanh^2(u) = 4e/(1+e)^2 with e = exp(-2|u|): no cancellation when tanh saturates.
__device__ __forceinline__ float sech2f(float u) {
  float e = expf(-2.f * fabsf(u)), q = 1.f + e;
  return 4.f * e / (q * q);
}
__device__ __forceinline__ double sech2d(double u) {
  double e = exp(-2.0 * fabs(u)), q = 1.0 + e;
  return 4.0 * e / (q * q);
}

__device__ __forceinline__ void visit(RowStats& st, int64_t j, float c, int64_t y, float w, bool smooth) {
  if (c > st.best_v) {  // strict: a thread sees its indices in increasing order
    st.best_v = c;
    st.best_i = j;
  }
  if (j != y) {
    if (c > st.m) {
      st.s = st.s * expf(st.m - c) + 1.f;
      st.m = c;
    } else if (c != neg_inf()) {
      st.s += expf(c - st.m);  // NaN c propagates into s
    }
  }
  if (smooth) st.wc += static_cast<double>(w) * c;
}

__device__ __forceinline__ void merge(RowStats& a, const RowStats& b) {
  float M = fmaxf(a.m, b.m);
  float sa = a.s == 0.f ? 0.f : a.s * (a.m == M ? 1.f : expf(a.m - M));
  float sb = b.s == 0.f ? 0.f : b.s * (b.m == M ? 1.f : expf(b.m - M));
  a.m = M;
  a.s = sa + sb;
  if (b.best_v > a.best_v || (b.best_v == a.best_v && b.best_i < a.best_i)) {
    a.best_v = b.best_v;
    a.best_i = b.best_i;
  }
  a.wc += b.wc;
}

__device__ __forceinline__ RowStats shfl_down(const RowStats& s, int o) {
  RowStats r;
  r.m = __shfl_down_sync(0xffffffffu, s.m, o);
  r.s = __shfl_down_sync(0xffffffffu, s.s, o);
  r.best_v = __shfl_down_sync(0xffffffffu, s.best_v, o);
  r.best_i = __shfl_down_sync(0xffffffffu, static_cast<long long>(s.best_i), o);
  r.wc = __shfl_down_sync(0xffffffffu, s.wc, o);
  return r;
}

__device__ __forceinline__ RowStats empty_stats() { return RowStats{neg_inf(), 0.f, neg_inf(), INT64_MAX, 0.0}; }

template <int VW>
__device__ __forceinline__ void load_vec(const float* p, float (&o)[VW]) {
  if constexpr (VW == 4) {
    float4 t = *reinterpret_cast<const float4*>(p);
    o[0] = t.x, o[1] = t.y, o[2] = t.z, o[3] = t.w;
  } else {
    o[0] = *p;
  }
}
template <int VW>
__device__ __forceinline__ void store_vec(float* p, const float (&v)[VW]) {
  if constexpr (VW == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}
template <class G, int VW>
__device__ __forceinline__ void store_grad(G* p, const float (&v)[VW]) {
  if constexpr (std::is_same_v<G, float>) {
    store_vec<VW>(p, v);
  } else if constexpr (VW == 4) {
    uint2 u;
    u.x = uint32_t(to_bits(p, v[0])) | (uint32_t(to_bits(p, v[1])) << 16);
    u.y = uint32_t(to_bits(p, v[2])) | (uint32_t(to_bits(p, v[3])) << 16);
    *reinterpret_cast<uint2*>(p) = u;
  } else {
    store_elem(p, v[0]);
  }
}

// One block per row. Pass 1 reads the row once (online max/sum-exp, argmax, smoothing
// sum) and keeps its first cache_elems in shared memory; pass 2 re-reads only the rest,
// and writes the gradient over the same bytes, tile by tile after a barrier, so a
// narrower gradient never overwrites logits another thread has yet to read.
template <class G, int VW>
__global__ void __launch_bounds__(kThreads) ce_rows_kernel(CeRowArgs a) {
  extern __shared__ float4 dyn_smem[];
  float* cache = reinterpret_cast<float*>(dyn_smem);
  __shared__ RowStats warp_stats[kThreads / 32];
  __shared__ RowCoef coef;
  constexpr int64_t kTile = int64_t(kThreads) * VW * kUnroll;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t row = blockIdx.x, V = a.V;
  const int64_t y = a.target[row];
  float* zr = a.logits + row * a.ld;
  G* gr = a.grad ? static_cast<G*>(a.grad) + row * a.grad_ld : reinterpret_cast<G*>(zr);
  const float* bias = a.bias;
  const float* w = a.ce_weight;
  const float cap = a.softcap;

  if (y == a.ignore_index || y < 0 || y >= V) {  // ignored (out-of-range targets too, as golden.cpp)
    if (a.want_grad) {
      float zero[VW] = {};
      for (int64_t j = int64_t(tid) * VW; j < V; j += int64_t(kThreads) * VW) store_grad<G, VW>(gr + j, zero);
    }
    if (tid == 0) {
      a.loss_row[row] = 0.0;
      a.z_row[row] = 0.0;
      a.acc_row[row] = 0.f;
      a.pred_row[row] = -1;
    }
    return;
  }

  const bool smooth = a.label_smoothing > 0;
  const int64_t cache_n = a.cache_elems;
  const float zy = zr[y] + (bias ? bias[y] : 0.f);
  const float cy = capped(zy, cap);

  // ---- pass 1 ----
  RowStats st = empty_stats();
  for (int64_t base = 0; base < V; base += kTile) {
    float z[kUnroll][VW];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t j = base + (int64_t(u) * kThreads + tid) * VW;
      if (j < V) load_vec<VW>(zr + j, z[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t j = base + (int64_t(u) * kThreads + tid) * VW;
      if (j >= V) continue;
      if (bias) {
        float b[VW];
        load_vec<VW>(bias + j, b);
#pragma unroll
        for (int v = 0; v < VW; ++v) z[u][v] += b[v];
      }
      if (j < cache_n) store_vec<VW>(cache + j, z[u]);
      float wv[VW];
#pragma unroll
      for (int v = 0; v < VW; ++v) wv[v] = 1.f;
      if (w && smooth) load_vec<VW>(w + j, wv);
#pragma unroll
      for (int v = 0; v < VW; ++v) visit(st, j + v, capped(z[u][v], cap), y, wv[v], smooth);
    }
  }
  for (int o = 16; o > 0; o >>= 1) merge(st, shfl_down(st, o));
  if (lane == 0) warp_stats[warp] = st;
  __syncthreads();
  if (warp == 0) {
    st = lane < kThreads / 32 ? warp_stats[lane] : empty_stats();
    for (int o = 16; o > 0; o >>= 1) merge(st, shfl_down(st, o));
  }

  // ---- row scalars, in double (thread 0) ----
  if (tid == 0) {
    const CeNorms nm = *a.norms;
    const double m = st.m, cyd = cy;
    const double M = fmax(m, cyd);
    const double so = st.s == 0.f ? 0.0 : st.s * (m == M ? 1.0 : exp(m - M));  // sum over j != y
    const double ey = cyd == M ? 1.0 : exp(cyd - M);
    const double d = so + ey, lse = M + log(d);
    // lse - c_y = log(1 + so/ey): exact even when p_y -> 1 (confident rows)
    const double ce = ey >= so ? log1p(so / ey) : lse - cyd;
    const int64_t pred = st.best_i != INT64_MAX ? st.best_i : 0;
    const double ls = a.label_smoothing, eps = ls / static_cast<double>(V), lsq = a.lse_square_scale;
    const double wy = w ? static_cast<double>(w[y]) : 1.0, Wsum = nm.w_sum;
    const double Dn = a.mean ? nm.d_weight : 1.0, Nn = a.mean ? nm.n_non_ignored : 1.0;
    const double loss = (1.0 - ls) * wy * ce + (smooth ? eps * (Wsum * lse - st.wc) : 0.0);
    const double zl = lsq != 0.0 ? lsq * lse * lse : 0.0;
    const double py = ey / d;
    const double scale = a.token_scaling ? py : 1.0;  // detached p_y
    a.loss_row[row] = scale * (loss / Dn + zl / Nn);
    a.z_row[row] = scale * zl / Nn;
    a.acc_row[row] = pred == y ? 1.f : 0.f;
    a.pred_row[row] = pred;
    if (a.want_grad) {
      const double F = (a.none ? static_cast<double>(a.token_grad[row]) : a.grad_output) * scale;
      const double zc = lsq != 0.0 ? 2.0 * lsq * lse / Nn : 0.0;  // z-loss gradient per unit p_j
      coef.M = static_cast<float>(M);
      coef.inv_d = static_cast<float>(1.0 / d);
      coef.A = static_cast<float>(F * (((1.0 - ls) * wy + eps * Wsum) / Dn + zc));
      coef.K = static_cast<float>(F * eps / Dn);
      // y entry with (p_y - 1) = -so/d folded in before any rounding
      double gy = F * ((1.0 - ls) * wy * (-so / d) / Dn + eps * (Wsum * py - wy) / Dn + zc * py);
      if (cap > 0.f) {
        const float ty = tanhf(zy / cap);
        gy *= a.tanh_chain ? static_cast<double>(1.f - ty * ty) : sech2d(static_cast<double>(zy) / cap);
      }
      coef.gy = static_cast<float>(gy);
    }
  }
  if (!a.want_grad) return;
  __syncthreads();
  const RowCoef cf = coef;

  // ---- pass 2: gradient, written over the row ----
  for (int64_t base = 0; base < V; base += kTile) {
    float z[kUnroll][VW];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t j = base + (int64_t(u) * kThreads + tid) * VW;
      if (j >= V) continue;
      if (j < cache_n) {
        load_vec<VW>(cache + j, z[u]);
      } else {
        load_vec<VW>(zr + j, z[u]);
        if (bias) {
          float b[VW];
          load_vec<VW>(bias + j, b);
#pragma unroll
          for (int v = 0; v < VW; ++v) z[u][v] += b[v];
        }
      }
    }
    __syncthreads();  // the whole tile is read before any of its bytes are overwritten
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t j = base + (int64_t(u) * kThreads + tid) * VW;
      if (j >= V) continue;
      float wv[VW], g[VW];
#pragma unroll
      for (int v = 0; v < VW; ++v) wv[v] = 1.f;
      if (w) load_vec<VW>(w + j, wv);
#pragma unroll
      for (int v = 0; v < VW; ++v) {
        float c = z[u][v], chain = 1.f;
        if (cap > 0.f) {
          float t = z[u][v] / cap;
          const float th = tanhf(t);
          c = cap * th;
          chain = a.tanh_chain ? 1.f - th * th : sech2f(t);
        }
        float p = expf(c - cf.M) * cf.inv_d;
        g[v] = fmaf(cf.A, p, -cf.K * wv[v]) * chain;
      }
      store_grad<G, VW>(gr + j, g);
    }
  }
  __syncthreads();
  if (tid == 0) {
    float gy[1] = {cf.gy};
    store_grad<G, 1>(gr + y, gy);
  }
}

__global__ void ce_norms_kernel(const int64_t* target, int64_t BT, const float* ce_weight, int64_t V,
                                int64_t ignore_index, CeNorms* out) {
  __shared__ double scratch[32];
  double n = 0, dsum = 0, wsum = 0;
  for (int64_t i = threadIdx.x; i < BT; i += blockDim.x) {
    int64_t t = target[i];
    if (t != ignore_index && t >= 0 && t < V) {
      n += 1.0;
      dsum += ce_weight ? static_cast<double>(ce_weight[t]) : 1.0;
    }
  }
  if (ce_weight)
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) wsum += ce_weight[j];
  n = block_sum(n, scratch);
  dsum = block_sum(dsum, scratch);
  wsum = block_sum(wsum, scratch);
  if (threadIdx.x == 0) *out = CeNorms{n, dsum, ce_weight ? wsum : static_cast<double>(V)};
}

template <class G, int VW>
void launch_typed(const CeRowArgs& a, int64_t rows, cudaStream_t s, const std::string& ctx) {
  auto kernel = ce_rows_kernel<G, VW>;
  size_t smem = static_cast<size_t>(a.cache_elems) * sizeof(float);
  FLCE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                  ctx);
  kernel<<<static_cast<unsigned>(rows), kThreads, smem, s>>>(a);
  FLCE_CUDA_CHECK_LAUNCH("ce_rows_kernel", ctx);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

int64_t ce_max_cache_elems() {
  int dev = 0, optin = 0;
  FLCE_CUDA_CHECK(cudaGetDevice(&dev), "ce_max_cache_elems");
  FLCE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "ce_max_cache_elems");
  cudaFuncAttributes attr{};
  FLCE_CUDA_CHECK(cudaFuncGetAttributes(&attr, ce_rows_kernel<float, 4>), "ce_max_cache_elems");
  int64_t bytes = static_cast<int64_t>(optin) - static_cast<int64_t>(attr.sharedSizeBytes);
  return std::max<int64_t>(0, bytes / 16 * 4);
}

void launch_ce_rows(CeRowArgs a, DType grad_dtype, int64_t rows, cudaStream_t s, const std::string& ctx) {
  if (rows <= 0) return;
  if (rows > INT_MAX) throw std::runtime_error("launch_ce_rows: too many rows in one chunk [" + ctx + "]");
  int64_t cache = a.want_grad ? a.cache_elems : 0;
  if (cache < 0) cache = a.V;
  cache = std::min({cache, a.V, ce_max_cache_elems()});
  a.cache_elems = cache / 4 * 4;
  const bool vec = a.V % 4 == 0 && a.ld % 4 == 0 && aligned16(a.logits) && (!a.bias || aligned16(a.bias)) &&
                   (!a.ce_weight || aligned16(a.ce_weight)) && (!a.grad || (a.grad_ld % 4 == 0 && aligned16(a.grad)));
  switch (grad_dtype) {
    case DType::F32: vec ? launch_typed<float, 4>(a, rows, s, ctx) : launch_typed<float, 1>(a, rows, s, ctx); break;
    case DType::BF16:
      vec ? launch_typed<Bf16Bits, 4>(a, rows, s, ctx) : launch_typed<Bf16Bits, 1>(a, rows, s, ctx);
      break;
    case DType::F16:
      vec ? launch_typed<F16Bits, 4>(a, rows, s, ctx) : launch_typed<F16Bits, 1>(a, rows, s, ctx);
      break;
    default: throw std::runtime_error("launch_ce_rows: gradient dtype must be fp32/fp16/bf16 [" + ctx + "]");
  }
}

void launch_ce_norms(const int64_t* target, int64_t BT, const float* ce_weight, int64_t V, int64_t ignore_index,
                     CeNorms* out, cudaStream_t s, const std::string& ctx) {
  ce_norms_kernel<<<1, 1024, 0, s>>>(target, BT, ce_weight, V, ignore_index, out);
  FLCE_CUDA_CHECK_LAUNCH("ce_norms_kernel", ctx);
}

}  // namespace flce
