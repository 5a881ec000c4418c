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

namespace {

// Rows of `row_bytes` each that fit `bytes`, at least 1, a multiple of 64 above 64.
int64_t rows_fitting(size_t bytes, size_t row_bytes) {
  int64_t fit = static_cast<int64_t>(bytes / row_bytes);
  if (fit >= 64) fit = fit / 64 * 64;
  return std::max<int64_t>(fit, 1);
}

// Spreads BT over ceil(BT/fit) equal pieces, keeping 64-multiples where fit has them.
int64_t even_rows(int64_t BT, int64_t fit) {
  int64_t n = (BT + fit - 1) / fit;
  int64_t rows = (BT + n - 1) / n;
  if (rows > 64 && rows % 64) rows = std::min(fit, (rows + 63) / 64 * 64);
  return std::min(rows, BT);
}

}  // namespace

ChunkPlan plan_chunks(int64_t BT, int64_t V, size_t grad_elem_bytes, size_t budget_bytes, int64_t override_rows,
                      int64_t override_group_rows) {
  ChunkPlan p;
  if (BT <= 0) return p;
  const size_t logit_row = static_cast<size_t>(V) * sizeof(float);
  const size_t grad_row = static_cast<size_t>(V) * grad_elem_bytes;
  int64_t rows, group;
  if (override_rows > 0) {
    rows = std::min(override_rows, BT);
    group = override_group_rows > rows ? std::min((override_group_rows + rows - 1) / rows * rows, BT) : rows;
    if (group < rows) group = rows;
  } else {
    rows = even_rows(BT, rows_fitting(budget_bytes, logit_row));  // in place
    group = rows;
    if (grad_elem_bytes < sizeof(float) && rows < BT) {
      const int64_t r = even_rows(BT, rows_fitting(budget_bytes / 3, logit_row));
      const size_t left = budget_bytes - static_cast<size_t>(r) * logit_row;
      const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(left / (static_cast<size_t>(r) * grad_row)));
      const int64_t n_groups = (BT + per * r - 1) / (per * r);
      const int64_t k = ((BT + n_groups - 1) / n_groups + r - 1) / r;  // chunks per group, evened out
      if (k * r > rows) rows = r, group = std::min(k * r, BT);
    }
  }
  p.rows = rows;
  p.n_chunks = (BT + rows - 1) / rows;
  p.group_rows = group;
  p.n_groups = (BT + group - 1) / group;
  return p;
}

}  // namespace flce
