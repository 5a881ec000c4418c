// Cross-entropy over one chunk of fp32 logits rows, one block per row: loss, z-loss,
// accuracy and argmax per row, and the logits gradient in the GEMM operand dtype, written
// either *in place* over the logits row (row stride in bytes unchanged: a bf16 gradient
// row has leading dimension 2V elements) or into a separate gradient buffer (`grad`),
// which lets several logits chunks feed one grad_weight GEMM. Semantics: see
// reference_flce.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "case/dtype.hpp"

namespace flce {

// Normalizers computed on the device before the chunk loop (no host sync).
struct CeNorms {
  double n_non_ignored = 0;  // N
  double d_weight = 0;       // D: sum of ce_weight[y] over non-ignored rows (N without ce_weight)
  double w_sum = 0;          // sum_j ce_weight[j] (V without ce_weight)
};

struct CeRowArgs {
  float* logits = nullptr;  // [rows, ld] fp32; overwritten by the gradient when want_grad
  int64_t ld = 0;           // fp32 elements between rows (>= V)
  void* grad = nullptr;     // null: gradient over the logits; else [rows, grad_ld] in grad dtype
  int64_t grad_ld = 0;      // gradient elements between rows (>= V), when grad is set
  const float* bias = nullptr;       // [V] fp32 or null
  const float* ce_weight = nullptr;  // [V] or null
  const int64_t* target = nullptr;   // [rows]
  const float* token_grad = nullptr; // [rows], reduction none only
  const CeNorms* norms = nullptr;
  int64_t V = 0, ignore_index = -100;
  float softcap = 0.0f;  // 0: off
  // Softcap chain rule as autograd's tanh backward forms it, 1 - t*t from an fp32 tanhf
  // (cancels as tanh saturates), instead of sech^2 = 4e/(1+e)^2 (does not).
  bool tanh_chain = false;
  double label_smoothing = 0, lse_square_scale = 0, grad_output = 1;
  bool mean = true, none = false, token_scaling = false, want_grad = true;
  int64_t cache_elems = 0;  // leading row elements kept in shared memory between passes
  // per-row outputs, [rows]
  double* loss_row = nullptr;
  double* z_row = nullptr;
  float* acc_row = nullptr;
  int64_t* pred_row = nullptr;
};

// Largest cache_elems this device's shared memory allows (multiple of 4).
int64_t ce_max_cache_elems();

// grad_dtype: F32, BF16 or F16. cache_elems is clamped to ce_max_cache_elems().
void launch_ce_rows(CeRowArgs a, DType grad_dtype, int64_t rows, cudaStream_t stream, const std::string& context);

// N, D and sum(ce_weight) into *out (single block, deterministic).
void launch_ce_norms(const int64_t* target, int64_t BT, const float* ce_weight, int64_t V, int64_t ignore_index,
                     CeNorms* out, cudaStream_t stream, const std::string& context);

}  // namespace flce
