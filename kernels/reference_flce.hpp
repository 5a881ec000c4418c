// CUDA reference for fused linear cross entropy (Liger-Kernel 0.8.5 semantics), chunked
// over BT so only one fp32 logits chunk (and one gradient group, see reference_plan.hpp)
// exists at a time.
//
// Per non-ignored row i (target y != ignore_index), with z = x_i W^T + b in fp32:
//   c = softcap ? s*tanh(z/s) : z;  lse = logsumexp(c);  p = softmax(c);  eps = ls/V
//   w_j = ce_weight_j or 1;  Wsum = sum_j w_j
//   loss_i = (1-ls) w_y (lse - c_y) + eps * sum_j w_j (lse - c_j);   z_i = lsq * lse^2
//   mean: loss_i/D + z_i/N  (N = #non-ignored, D = sum of w_y over them, or N);
//   sum/none: loss_i + z_i.  Token scaling multiplies loss_i, z_i and the gradient by p_y.
//   dlogits_j = u * [ (1-ls) w_y (p_j - [j==y]) + eps (Wsum p_j - w_j) ] / D + 2 lsq lse p_j / N
//   (D = N = 1 unless mean), u = grad_output (mean/sum) or token_grad_i (none), times
//   (1 - tanh^2(z/s)) with softcap. Ignored rows (target == ignore_index or outside
//   [0, V)): loss 0, zero gradient, accuracy 0, predicted -1. Outputs: loss in
//   loss_dtype(c) (fp32 under Liger semantics), z_loss input dtype, token_accuracy fp32
//   (mean over non-ignored for mean/sum: 0/0 = NaN when all ignored, as Liger),
//   predicted_tokens int64 (first index of the max; NaN never wins), as oracles/golden.cpp.
//
// Precision (what makes it a reference rather than a subject):
//   * logits GEMM accumulates in fp32 into an fp32 buffer (no rounding to bf16);
//   * row statistics (lse, loss, p_y) in double; lse - c_y = log1p(sum_{j!=y} e/e_y) and
//     p_y - 1 = -sum_{j!=y}/d, so confident rows keep their relative accuracy;
//   * grad_output / token_grad / p_y are folded into dlogits before its single rounding
//     to the GEMM operand dtype (gemm_operand_dtype), which is what Liger feeds its
//     backward GEMMs;
//   * grad_input = G W and grad_weight += G^T x follow DTYPE_OUT_CONTRACT.md; grad_weight
//     and grad_bias accumulate per chunk in grad_accum_dtype and, for an fp32 accumulator
//     of a bf16/fp16 weight, are rounded once at the end;
//   * mean/sum scalars: one double sum over rows, one rounding.
// Gradients are produced for requires_grad inputs only. Semantics::TORCH changes two
// things: a mean over no rows gives NaN instead of 0, and the loss dtype (loss_dtype).
// Unlike golden.cpp, x and W are rounded to the operand dtype first under autocast.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <string>

#include "kernels/device_buffer.hpp"
#include "kernels/device_inputs.hpp"
#include "kernels/phase_timer.hpp"
#include "kernels/reference_plan.hpp"
#include "case/case.hpp"
#include "case/outputs.hpp"

namespace flce {

struct ReferenceOptions {
  int64_t chunk_rows = 0;                              // > 0: force rows per chunk
  int64_t group_rows = 0;                              // > 0 (with chunk_rows): force rows per gradient group
  size_t chunk_budget_bytes = kDefaultChunkBudgetBytes;  // logits chunk + gradient group budget
  int64_t ce_cache_elems = -1;                         // -1: as much shared memory as fits
  bool allow_tf32 = false;                             // fp32 operand GEMMs only
  PhaseTimer* timer = nullptr;                         // per-phase GPU times, if set
  // The logits contract of an implementation that materializes its logits chunk in the
  // operand dtype (Liger): the fp32 GEMM result is rounded to it, the bias added in it.
  // Off (default): fp32 logits, the precise reference. MATH.md, "Which reference".
  bool logits_in_operand_dtype = false;
  // The softcap chain rule as 1 - tanh^2 from fp32 tanhf (autograd's and Liger's form), not
  // the cancellation-free sech^2. MATH.md, "Which reference".
  bool tanh_chain = false;
};

// Device tensors named as in case/outputs.hpp (loss, z_loss, token_accuracy,
// predicted_tokens, grad_input, grad_weight, grad_bias; op kinds: out).
struct ReferenceResult {
  std::map<std::string, DeviceTensor> tensors;
  ChunkPlan plan;
  DType operand_dtype = DType::F32;
};

// All work is queued on `stream`; no host synchronization inside (allocations are
// stream-ordered). Throws std::runtime_error (CUDA/cuBLAS failures name the case JSON).
ReferenceResult reference_flce_cuda(const Case& c, const DeviceInputs& in, cudaStream_t stream,
                                    const ReferenceOptions& opt = {});

// Copies every tensor to the host, widened to double (synchronizes `stream`). For small
// cases; large tensors should be compared on the device (compare.hpp).
Outputs to_host(const ReferenceResult& r, cudaStream_t stream = nullptr);

}  // namespace flce
