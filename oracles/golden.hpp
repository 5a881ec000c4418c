// The fp64 golden reference: FLCE (and the dtype_out op family) computed from the
// math in double precision, chunk-free, on the CPU. It is the judge's ground truth.
// The math of every flag is written down in judge/MATH.md.
#pragma once
#include "case/case.hpp"
#include "case/inputs.hpp"
#include "case/outputs.hpp"

namespace flce {

// Exact math on the given (already storage-rounded) inputs. Output dtypes are the
// ones the case's semantics prescribe (what a conforming subject returns).
Outputs golden(const Case& c, const Inputs& in);

// Per-token pieces, exposed for properties and the judge's bounds.
struct TokenStats {
  double lse = 0, max_logit = 0, p_target = 0, top2_margin = 0;
  bool ignored = false;
};
std::vector<TokenStats> golden_token_stats(const Case& c, const Inputs& in);

}  // namespace flce
