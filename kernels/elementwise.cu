#include "kernels/elementwise.hpp"

#include <algorithm>

#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"

namespace flce {
namespace {

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 132 * 64)); }

__global__ void cast_kernel(const void* src, DType sd, void* dst, DType dd, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store_from_f64(dst, dd, i, load_as_f64(src, sd, i));
}

__global__ void colsum_kernel(const void* G, DType gd, int64_t rows, int64_t cols, int64_t ldg, void* acc,
                              DType ad) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < cols; j += int64_t(gridDim.x) * blockDim.x) {
    double s = load_as_f64(acc, ad, j);
    double c = 0.0;
    for (int64_t i = 0; i < rows; ++i) c += load_as_f64(G, gd, i * ldg + j);
    store_from_f64(acc, ad, j, s + c);
  }
}

__global__ void round_logits_kernel(float* z, int64_t rows, int64_t V, int64_t ld, const float* bias, DType to) {
  const int64_t n = rows * V;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = k / V, j = k % V;
    float v = round_to(to, z[i * ld + j]);
    if (bias) v = round_to(to, v + bias[j]);
    z[i * ld + j] = v;
  }
}

}  // namespace

void round_logits_in_place(float* z, int64_t rows, int64_t V, int64_t ld, const float* bias, DType to,
                           cudaStream_t s, const std::string& ctx) {
  if (rows <= 0 || V <= 0 || to == DType::F32) return;
  round_logits_kernel<<<grid_for(rows * V), 256, 0, s>>>(z, rows, V, ld, bias, to);
  FLCE_CUDA_CHECK_LAUNCH("round_logits_kernel", ctx);
}

void cast_elements(const void* src, DType sd, void* dst, DType dd, int64_t n, cudaStream_t s,
                   const std::string& ctx) {
  if (n <= 0) return;
  cast_kernel<<<grid_for(n), 256, 0, s>>>(src, sd, dst, dd, n);
  FLCE_CUDA_CHECK_LAUNCH("cast_kernel", ctx);
}

DeviceTensor cast_tensor(const DeviceTensor& t, DType dtype, cudaStream_t s, const std::string& ctx) {
  DeviceTensor out = make_device_tensor(dtype, t.shape, s, ctx);
  cast_elements(t.data(), t.dtype, out.data(), dtype, t.numel(), s, ctx);
  return out;
}

void narrow_f32_in_place(void* buf, int64_t n, DType to, cudaStream_t s, const std::string& ctx) {
  if (to != DType::BF16 && to != DType::F16)
    throw std::runtime_error("narrow_f32_in_place: target must be bf16 or fp16 [" + ctx + "]");
  if (n <= 0) return;
  const int64_t slice = std::min<int64_t>(n, int64_t(1) << 25);
  auto* f = static_cast<float*>(buf);
  auto* h = static_cast<uint16_t*>(buf);
  // Slice 0 overlaps itself: stage it.
  DeviceBuffer tmp(static_cast<size_t>(slice) * 2, s, ctx);
  cast_elements(f, DType::F32, tmp.get(), to, slice, s, ctx);
  FLCE_CUDA_CHECK(cudaMemcpyAsync(h, tmp.get(), static_cast<size_t>(slice) * 2, cudaMemcpyDeviceToDevice, s), ctx);
  // Slice k (k >= 1) writes bytes [2kS, 2(k+1)S) = fp32 elements [kS/2, (k+1)S/2), all < kS:
  // read by earlier launches on this stream, and disjoint from the slice being read.
  for (int64_t start = slice; start < n; start += slice)
    cast_elements(f + start, DType::F32, h + start, to, std::min(slice, n - start), s, ctx);
}

void colsum_accumulate(const void* G, DType gd, int64_t rows, int64_t cols, int64_t ldg, void* acc, DType ad,
                       cudaStream_t s, const std::string& ctx) {
  if (cols <= 0) return;
  colsum_kernel<<<grid_for(cols), 256, 0, s>>>(G, gd, rows, cols, ldg, acc, ad);
  FLCE_CUDA_CHECK_LAUNCH("colsum_kernel", ctx);
}

}  // namespace flce
