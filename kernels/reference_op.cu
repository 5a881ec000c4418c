#include "kernels/reference_op.hpp"

#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/dtype_out_gemm.hpp"

namespace flce {

ReferenceResult reference_op_cuda(const Case& c, const DeviceInputs& in, cudaStream_t s, bool allow_tf32) {
  const std::string ctx = to_json(c, -1);
  if (!c.is_op()) throw std::runtime_error("reference_op_cuda: kind must be mm/addmm/bmm/baddbmm [" + ctx + "]");
  if (in.op_a.empty() || in.x.empty() || (c.has_accumulator() && in.op_c.empty()))
    throw std::runtime_error("reference_op_cuda: inputs lack op operands [" + ctx + "]");
  const int64_t B = in.batch, V = in.V, BT = in.BT, H = in.H;
  const DType out_dt = c.op_out_dtype();

  ReferenceResult r;
  r.operand_dtype = c.input_dtype;
  std::vector<int64_t> shape = c.batched() ? std::vector<int64_t>{B, V, H} : std::vector<int64_t>{V, H};
  DeviceTensor out = make_device_tensor(out_dt, shape, s, ctx);
  GemmDesc g;  // out[b] = C[b] + A[b] @ B[b]
  g.M = V, g.N = H, g.K = BT;
  g.lda = BT, g.ldb = H, g.ldc = H, g.ldd = H;
  g.ab_type = c.input_dtype, g.cd_type = out_dt;
  g.beta = c.has_accumulator() ? 1.0f : 0.0f;
  g.batch = B;
  g.stride_a = V * BT, g.stride_b = BT * H, g.stride_c = V * H, g.stride_d = V * H;
  g.allow_tf32 = allow_tf32;
  DeviceBuffer ws(kGemmWorkspaceBytes, s, ctx), stage;
  if (!dtype_out_supported(g.ab_type, out_dt)) stage = DeviceBuffer(B * V * H * sizeof(float), s, ctx);
  gemm_any_out(default_lt_handle(), g, in.op_a.data(), in.x.data(), c.has_accumulator() ? in.op_c.data() : nullptr,
               out.data(), stage.as<float>(), s, ws.get(), ws.bytes(), ctx);
  r.tensors["out"] = std::move(out);
  return r;
}

}  // namespace flce
