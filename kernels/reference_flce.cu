#include "kernels/reference_flce.hpp"

#include <stdexcept>

#include "kernels/ce_finalize.hpp"
#include "kernels/ce_rows.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/dtype_out_gemm.hpp"
#include "kernels/elementwise.hpp"

namespace flce {
namespace {

void check_inputs(const Case& c, const DeviceInputs& in, const std::string& ctx) {
  auto bad = [&](const std::string& what) {
    throw std::runtime_error("reference_flce_cuda: " + what + " [context: " + ctx + "]");
  };
  if (c.kind != Kind::FLCE) bad("kind must be flce (use reference_op_cuda)");
  if (in.H != c.H || in.V != c.V || in.BT < 1) bad("inputs do not match the case's H/V");
  if (in.x.empty() || in.w.empty() || in.target.empty()) bad("missing x, w or target");
  if (c.bias && in.bias.empty()) bad("case has bias but inputs do not");
  if (c.ce_weight && in.ce_weight.empty()) bad("case has ce_weight but inputs do not");
  if (in.x.dtype != c.input_dtype || in.w.dtype != c.weight_dtype) bad("input dtypes do not match the case");
}

// Operand in the GEMM dtype: the input itself, or a converted copy kept in `hold`.
const void* as_operand(const DeviceTensor& t, DType op, DeviceTensor& hold, cudaStream_t s, const std::string& ctx) {
  if (t.dtype == op) return t.data();
  hold = cast_tensor(t, op, s, ctx);
  return hold.data();
}

}  // namespace

ReferenceResult reference_flce_cuda(const Case& c, const DeviceInputs& in, cudaStream_t s,
                                    const ReferenceOptions& opt) {
  const std::string ctx = to_json(c, -1);
  check_inputs(c, in, ctx);
  const int64_t BT = in.BT, H = in.H, V = in.V;
  const DType op = gemm_operand_dtype(c), acc_dt = grad_accum_dtype(c);
  const bool want_gi = c.requires_grad.input, want_gw = c.requires_grad.weight;
  const bool want_gb = c.bias && c.requires_grad.bias;
  const bool want_grad = want_gi || want_gw || want_gb;
  const bool reduce = c.reduction != Reduction::NONE;
  cublasLtHandle_t lt = default_lt_handle();

  ReferenceResult r;
  r.operand_dtype = op;
  r.plan = plan_chunks(BT, V, dtype_size(op), opt.chunk_budget_bytes, opt.chunk_rows, opt.group_rows);
  const int64_t rows = r.plan.rows, group_rows = r.plan.group_rows;
  const bool in_place = r.plan.in_place() || !want_grad;

  // Operands, bias in fp32, normalizers: once, before the chunk loop.
  DeviceTensor x_hold, w_hold, bias32;
  const void* x_op = as_operand(in.x, op, x_hold, s, ctx);
  const void* w_op = as_operand(in.w, op, w_hold, s, ctx);
  if (c.bias) bias32 = cast_tensor(in.bias, DType::F32, s, ctx);
  DeviceBuffer norms(sizeof(CeNorms), s, ctx);
  const float* ce_w = c.ce_weight ? in.ce_weight.buf.as<float>() : nullptr;
  launch_ce_norms(in.target.buf.as<int64_t>(), BT, ce_w, V, c.ignore_index, norms.as<CeNorms>(), s, ctx);

  // Per-row results and outputs.
  DeviceBuffer loss_row(BT * sizeof(double), s, ctx), z_row(BT * sizeof(double), s, ctx);
  DeviceBuffer acc_row(BT * sizeof(float), s, ctx);
  DeviceTensor pred = make_device_tensor(DType::I64, {BT}, s, ctx);
  std::vector<int64_t> scalar_shape = reduce ? std::vector<int64_t>{} : std::vector<int64_t>{BT};
  DeviceTensor loss = make_device_tensor(loss_dtype(c), scalar_shape, s, ctx);
  DeviceTensor zl, acc;
  if (c.return_z_loss) zl = make_device_tensor(c.input_dtype, scalar_shape, s, ctx);
  if (c.return_token_accuracy) acc = make_device_tensor(DType::F32, scalar_shape, s, ctx);
  DeviceTensor gi, gw, gb;
  if (want_gi) gi = make_device_tensor(c.input_dtype, {BT, H}, s, ctx);
  if (want_gw) {
    gw = make_device_tensor(acc_dt, {V, H}, s, ctx);
    FLCE_CUDA_CHECK(cudaMemsetAsync(gw.data(), 0, gw.buf.bytes(), s), ctx);
  }
  if (want_gb) {
    gb = make_device_tensor(acc_dt, {V}, s, ctx);
    FLCE_CUDA_CHECK(cudaMemsetAsync(gb.data(), 0, gb.buf.bytes(), s), ctx);
  }
  // Staging only for operand/output pairs cuBLASLt cannot do directly (mixed dtypes).
  DeviceBuffer gi_stage, gw_stage;
  if (want_gi && !dtype_out_supported(op, c.input_dtype))
    gi_stage = DeviceBuffer(group_rows * H * sizeof(float), s, ctx);
  if (want_gw && !dtype_out_supported(op, acc_dt)) gw_stage = DeviceBuffer(V * H * sizeof(float), s, ctx);
  DeviceBuffer ws(kGemmWorkspaceBytes, s, ctx);
  DeviceBuffer chunk(static_cast<size_t>(rows) * V * sizeof(float), s, ctx);
  DeviceBuffer grads;  // the gradient group, when not written over the logits
  if (!in_place) grads = DeviceBuffer(static_cast<size_t>(group_rows) * V * dtype_size(op), s, ctx);

  const size_t op_size = dtype_size(op);
  // Gradient rows: over the logits (row stride 4V bytes) or packed in `grads`.
  const int64_t ldg = in_place ? V * static_cast<int64_t>(sizeof(float) / op_size) : V;
  void* gbase = in_place ? chunk.get() : grads.get();
  const char* x_bytes = static_cast<const char*>(x_op);

  for (int64_t gstart = 0; gstart < BT; gstart += group_rows) {
    const int64_t gn = std::min(group_rows, BT - gstart);
    for (int64_t start = gstart; start < gstart + gn; start += rows) {
      const int64_t n = std::min(rows, gstart + gn - start);
      const std::string cctx = "rows " + std::to_string(start) + "+" + std::to_string(n) + "; " + ctx;
      {
        PhaseScope ps(opt.timer, "gemm_logits");
        GemmDesc g;  // logits[n, V] = x[start:start+n] @ W^T, fp32 out
        g.M = n, g.N = V, g.K = H;
        g.trans_b = true;
        g.lda = H, g.ldb = H, g.ldd = V;
        g.ab_type = op, g.cd_type = DType::F32;
        g.allow_tf32 = opt.allow_tf32;
        gemm_dtype_out(lt, g, x_bytes + start * H * op_size, w_op, nullptr, chunk.get(), s, ws.get(), ws.bytes(),
                       cctx);
      }
      const bool narrow_logits = opt.logits_in_operand_dtype && op != DType::F32;
      if (narrow_logits)
        round_logits_in_place(chunk.as<float>(), n, V, V, c.bias ? bias32.buf.as<float>() : nullptr, op, s, cctx);
      PhaseScope ps(opt.timer, "ce_rows");
      CeRowArgs a;
      a.logits = chunk.as<float>();
      a.ld = V;
      if (!in_place) {
        a.grad = static_cast<char*>(gbase) + (start - gstart) * V * op_size;
        a.grad_ld = V;
      }
      a.bias = c.bias && !narrow_logits ? bias32.buf.as<float>() : nullptr;  // else already in the logits
      a.ce_weight = ce_w;
      a.target = in.target.buf.as<int64_t>() + start;
      a.token_grad = reduce ? nullptr : in.token_grad.buf.as<float>() + start;
      a.norms = norms.as<CeNorms>();
      a.V = V;
      a.ignore_index = c.ignore_index;
      a.softcap = c.softcap ? static_cast<float>(*c.softcap) : 0.0f;
      a.tanh_chain = opt.tanh_chain;
      a.label_smoothing = c.label_smoothing;
      a.lse_square_scale = c.lse_square_scale;
      a.grad_output = c.grad_output;
      a.mean = c.reduction == Reduction::MEAN;
      a.none = !reduce;
      a.token_scaling = c.use_token_scaling;
      a.want_grad = want_grad;
      a.cache_elems = opt.ce_cache_elems;
      a.loss_row = loss_row.as<double>() + start;
      a.z_row = z_row.as<double>() + start;
      a.acc_row = acc_row.as<float>() + start;
      a.pred_row = pred.buf.as<int64_t>() + start;
      launch_ce_rows(a, op, n, s, cctx);
    }
    // The group's gradient G[gn, V] (leading dimension ldg) feeds one GEMM of each kind.
    const std::string gctx = "group rows " + std::to_string(gstart) + "+" + std::to_string(gn) + "; " + ctx;
    if (want_gb) {
      PhaseScope ps(opt.timer, "grad_bias");
      colsum_accumulate(gbase, op, gn, V, ldg, gb.data(), acc_dt, s, gctx);
    }
    if (want_gi) {
      PhaseScope ps(opt.timer, "gemm_grad_input");
      GemmDesc g;  // grad_input[gstart:gstart+gn] = G[gn, V] @ W[V, H]
      g.M = gn, g.N = H, g.K = V;
      g.lda = ldg, g.ldb = H, g.ldd = H;
      g.ab_type = op, g.cd_type = c.input_dtype;
      g.allow_tf32 = opt.allow_tf32;
      char* out = static_cast<char*>(gi.data()) + gstart * H * dtype_size(c.input_dtype);
      gemm_any_out(lt, g, gbase, w_op, nullptr, out, gi_stage.as<float>(), s, ws.get(), ws.bytes(), gctx);
    }
    if (want_gw) {
      PhaseScope ps(opt.timer, "gemm_grad_weight");
      GemmDesc g;  // grad_weight[V, H] += G^T[V, gn] @ x[gstart:gstart+gn]
      g.M = V, g.N = H, g.K = gn;
      g.trans_a = true;
      g.lda = ldg, g.ldb = H, g.ldc = H, g.ldd = H;
      g.ab_type = op, g.cd_type = acc_dt;
      g.beta = 1.0f;
      g.allow_tf32 = opt.allow_tf32;
      gemm_any_out(lt, g, gbase, x_bytes + gstart * H * op_size, gw.data(), gw.data(), gw_stage.as<float>(), s,
                   ws.get(), ws.bytes(), gctx);
    }
  }

  grads.reset();
  chunk.reset();  // before the narrowing below allocates its slice buffer: lower peak
  ws.reset();
  {
    PhaseScope ps(opt.timer, "finalize");
    CeFinalizeArgs f;
    f.loss_row = loss_row.as<double>();
    f.z_row = z_row.as<double>();
    f.acc_row = acc_row.as<float>();
    f.norms = norms.as<CeNorms>();
    f.BT = BT;
    f.reduce = reduce;
    f.nan_if_empty = nan_if_all_ignored(c) && c.reduction == Reduction::MEAN;
    f.loss_out = loss.data();
    f.loss_dtype = loss.dtype;
    f.z_out = c.return_z_loss ? zl.data() : nullptr;
    f.z_dtype = c.input_dtype;
    f.acc_out = c.return_token_accuracy ? acc.buf.as<float>() : nullptr;
    launch_ce_finalize(f, s, ctx);
    // An fp32 accumulator of a 16-bit weight is rounded once, here (Liger: .to(weight.dtype)).
    if (want_gw && gw.dtype != c.weight_dtype) {
      narrow_f32_in_place(gw.data(), gw.numel(), c.weight_dtype, s, ctx);
      gw.dtype = c.weight_dtype;
    }
    if (want_gb && gb.dtype != c.weight_dtype) gb = cast_tensor(gb, c.weight_dtype, s, ctx);
  }

  r.tensors["loss"] = std::move(loss);
  if (c.return_z_loss) r.tensors["z_loss"] = std::move(zl);
  if (c.return_token_accuracy) r.tensors["token_accuracy"] = std::move(acc);
  if (c.return_predicted_tokens) r.tensors["predicted_tokens"] = std::move(pred);
  if (want_gi) r.tensors["grad_input"] = std::move(gi);
  if (want_gw) r.tensors["grad_weight"] = std::move(gw);
  if (want_gb) r.tensors["grad_bias"] = std::move(gb);
  return r;
}

}  // namespace flce
