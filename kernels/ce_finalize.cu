#include "kernels/ce_finalize.hpp"

#include <algorithm>

#include "kernels/block_reduce.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/dtype_device.cuh"

namespace flce {
namespace {

__global__ void finalize_reduced_kernel(CeFinalizeArgs a) {
  __shared__ double scratch[32];
  double l = 0, z = 0, acc = 0;
  for (int64_t i = threadIdx.x; i < a.BT; i += blockDim.x) {
    l += a.loss_row[i];
    z += a.z_row[i];
    acc += a.acc_row[i];
  }
  l = block_sum(l, scratch);
  z = block_sum(z, scratch);
  acc = block_sum(acc, scratch);
  if (threadIdx.x != 0) return;
  const CeNorms nm = *a.norms;
  if (a.nan_if_empty && nm.n_non_ignored == 0.0) l = __longlong_as_double(0x7ff8000000000000LL);
  store_from_f64(a.loss_out, a.loss_dtype, 0, l);
  if (a.z_out) store_from_f64(a.z_out, a.z_dtype, 0, z);
  if (a.acc_out) a.acc_out[0] = static_cast<float>(acc / nm.n_non_ignored);  // 0/0 = NaN when all ignored (as Liger)
}

__global__ void finalize_none_kernel(CeFinalizeArgs a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < a.BT; i += int64_t(gridDim.x) * blockDim.x) {
    store_from_f64(a.loss_out, a.loss_dtype, i, a.loss_row[i]);
    if (a.z_out) store_from_f64(a.z_out, a.z_dtype, i, a.z_row[i]);
    if (a.acc_out) a.acc_out[i] = a.acc_row[i];
  }
}

}  // namespace

void launch_ce_finalize(const CeFinalizeArgs& a, cudaStream_t s, const std::string& ctx) {
  if (a.reduce) {
    finalize_reduced_kernel<<<1, 1024, 0, s>>>(a);
    FLCE_CUDA_CHECK_LAUNCH("finalize_reduced_kernel", ctx);
  } else if (a.BT > 0) {
    unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((a.BT + 255) / 256, 1, 4096));
    finalize_none_kernel<<<grid, 256, 0, s>>>(a);
    FLCE_CUDA_CHECK_LAUNCH("finalize_none_kernel", ctx);
  }
}

}  // namespace flce
