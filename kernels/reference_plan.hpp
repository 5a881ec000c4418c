// Host-side decisions of the CUDA reference that other oracles must agree on:
// the GEMM operand dtype and how BT is cut into chunks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "case/case.hpp"

namespace flce {

// Dtype both GEMM operands (and the logits gradient) are in: the autocast dtype when
// autocast is on (Liger runs its matmuls under autocast); else the shared dtype of x
// and W; else fp32 (torch would reject mixed operands; the reference promotes).
DType gemm_operand_dtype(const Case& c);

// Dtype grad_weight/grad_bias accumulate in: fp32 when accum_dtype is fp32, else the
// weight dtype (Liger's accum_dtype=None).
DType grad_accum_dtype(const Case& c);

struct ChunkPlan {
  int64_t rows = 0;        // logits rows per chunk (the last may be shorter)
  int64_t n_chunks = 0;
  int64_t group_rows = 0;  // rows per gradient group: whole chunks feeding one grad_input
  int64_t n_groups = 0;    // and one grad_weight GEMM (== rows: gradient in place)
  bool in_place() const { return group_rows == rows; }
};

inline constexpr size_t kDefaultChunkBudgetBytes = size_t(768) << 20;

// Two ways to spend `budget_bytes` of per-chunk memory:
//  * in place: one fp32 logits buffer that the gradient overwrites, rows = budget / 4V;
//  * split (16-bit gradients only): a logits buffer of ~1/3 of the budget and a gradient
//    buffer of whole logits chunks in the rest, rows = budget / 12V, group_rows ~ 4x rows.
// Every group is one pass of grad_weight's read-modify-write over V x H in the
// accumulator dtype, so fewer, larger groups are what make an fp32 accumulator cheap; a
// 2-byte gradient holds twice the rows a 4-byte logits buffer does. The split is taken
// only when it gives larger groups than in place. Row counts are multiples of 64 (GEMM
// tiles) where they exceed 64 and are evened out over the groups. override_rows > 0
// forces the chunk rows; override_group_rows > 0 the group rows (rounded up to whole
// chunks). Tests use the overrides.
ChunkPlan plan_chunks(int64_t BT, int64_t V, size_t grad_elem_bytes, size_t budget_bytes, int64_t override_rows = 0,
                      int64_t override_group_rows = 0);

}  // namespace flce
