// Host-side decisions of the CUDA reference that other oracles must agree on:
// the GEMM operand dtype and how BT is cut into chunks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "oracles/case.hpp"

namespace flce {

// Dtype both GEMM operands (and the logits gradient) are in: the autocast dtype when
// autocast is on (Liger runs its matmuls under autocast); else the shared dtype of x
// and W; else fp32 (torch would reject mixed operands; the reference promotes).
DType gemm_operand_dtype(const Case& c);

// Dtype grad_weight/grad_bias accumulate in: fp32 when accum_dtype is fp32, else the
// weight dtype (Liger's accum_dtype=None).
DType grad_accum_dtype(const Case& c);

struct ChunkPlan {
  int64_t rows = 0;      // rows per chunk (the last may be shorter)
  int64_t n_chunks = 0;
};

inline constexpr size_t kDefaultChunkBudgetBytes = size_t(1) << 30;

// The only per-chunk buffer is the fp32 logits chunk (the gradient overwrites it), so
// rows = budget / (4 V), rounded down to a multiple of 64 (GEMM tile friendly), then
// evened out over the chunks it implies. override_rows > 0 wins (tests use it).
ChunkPlan plan_chunks(int64_t BT, int64_t V, size_t budget_bytes, int64_t override_rows = 0);

}  // namespace flce
