#include "kernels/device_inputs.hpp"

#include <algorithm>

#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"
#include "case/inputs.hpp"

namespace flce {
namespace {

// Element generators as functors over a flat index, so one fill kernel serves all.
struct GenX {
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_input(g, i / g.H, i % g.H); }
};
struct GenW {
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_weight(g, i / g.H, i % g.H); }
};
struct GenBias {
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_bias(g, i); }
};
struct GenCeWeight {
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_ce_weight(g, i); }
};
struct GenTokenGrad {
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_token_grad(g, i); }
};
struct GenOpA {  // [batch, V, BT]
  GenSpec g;
  __device__ float operator()(int64_t i) const {
    return gen_op_a(g, i / (g.V * g.BT), (i / g.BT) % g.V, i % g.BT);
  }
};
struct GenOpC {  // [batch, V, H]
  GenSpec g;
  __device__ float operator()(int64_t i) const { return gen_op_c(g, i / (g.V * g.H), (i / g.H) % g.V, i % g.H); }
};

// Generated values are already exact in `dt`, so this store is a pure re-encoding.
template <class F>
__global__ void fill_kernel(F f, void* out, DType dt, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store_from_f32(out, dt, i, f(i));
}

__global__ void target_kernel(GenSpec g, int64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = gen_target(g, i);
}

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 132 * 64)); }

template <class F>
DeviceTensor fill(F f, DType dt, std::vector<int64_t> shape, cudaStream_t s, const std::string& ctx,
                  const char* what) {
  DeviceTensor t = make_device_tensor(dt, std::move(shape), s, ctx);
  const int64_t n = t.numel();
  if (n == 0) return t;
  fill_kernel<<<grid_for(n), 256, 0, s>>>(f, t.data(), dt, n);
  FLCE_CUDA_CHECK_LAUNCH(std::string("fill_kernel ") + what, ctx);
  return t;
}

}  // namespace

DeviceInputs make_device_inputs(const Case& c, cudaStream_t s, int64_t BT_override) {
  const std::string ctx = "make_device_inputs seed=" + std::to_string(c.seed);
  DeviceInputs in;
  GenSpec g = make_gen_spec(c, BT_override);
  in.spec = g;
  in.BT = g.BT;
  in.H = g.H;
  in.V = g.V;
  in.batch = g.batch;
  in.x = fill(GenX{g}, g.x_dtype, {g.batch * g.BT, g.H}, s, ctx, "x");
  if (c.is_op()) {
    in.op_a = fill(GenOpA{g}, g.x_dtype, {g.batch, g.V, g.BT}, s, ctx, "op_a");
    if (c.has_accumulator()) in.op_c = fill(GenOpC{g}, g.op_c_dtype, {g.batch, g.V, g.H}, s, ctx, "op_c");
    return in;
  }
  in.w = fill(GenW{g}, g.w_dtype, {g.V, g.H}, s, ctx, "w");
  if (c.bias) in.bias = fill(GenBias{g}, g.w_dtype, {g.V}, s, ctx, "bias");
  if (c.ce_weight) in.ce_weight = fill(GenCeWeight{g}, DType::F32, {g.V}, s, ctx, "ce_weight");
  in.token_grad = fill(GenTokenGrad{g}, DType::F32, {g.BT}, s, ctx, "token_grad");
  in.target = make_device_tensor(DType::I64, {g.BT}, s, ctx);
  target_kernel<<<grid_for(g.BT), 256, 0, s>>>(g, in.target.buf.as<int64_t>(), g.BT);
  FLCE_CUDA_CHECK_LAUNCH("target_kernel", ctx);
  return in;
}

}  // namespace flce
