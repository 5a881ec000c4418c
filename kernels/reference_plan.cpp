#include "kernels/reference_plan.hpp"

#include <algorithm>

namespace flce {

DType gemm_operand_dtype(const Case& c) {
  if (c.autocast == Autocast::BF16) return DType::BF16;
  if (c.autocast == Autocast::F16) return DType::F16;
  if (c.input_dtype == c.weight_dtype) return c.input_dtype;
  return DType::F32;
}

DType grad_accum_dtype(const Case& c) { return c.accum_dtype ? *c.accum_dtype : c.weight_dtype; }

ChunkPlan plan_chunks(int64_t BT, int64_t V, size_t budget_bytes, int64_t override_rows) {
  ChunkPlan p;
  if (BT <= 0) return p;
  int64_t rows = override_rows;
  if (rows <= 0) {
    int64_t fit = static_cast<int64_t>(budget_bytes / (static_cast<size_t>(V) * sizeof(float)));
    if (fit >= 64) fit = fit / 64 * 64;
    fit = std::max<int64_t>(fit, 1);
    int64_t n = (BT + fit - 1) / fit;
    rows = (BT + n - 1) / n;
    if (rows > 64 && rows % 64) rows = std::min(fit, (rows + 63) / 64 * 64);
  }
  p.rows = std::min(rows, BT);
  p.n_chunks = (BT + p.rows - 1) / p.rows;
  return p;
}

}  // namespace flce
