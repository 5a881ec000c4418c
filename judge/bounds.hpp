// Error bounds the judge holds every oracle to, derived from dtype unit roundoffs and
// reduction lengths (derivation: judge/MATH.md, "Error bounds"). One bound per
// output element, same shapes as golden(); never a hand-tuned atol.
#pragma once
#include <vector>

#include "case/case.hpp"
#include "case/inputs.hpp"
#include "case/outputs.hpp"

namespace flce {

// Probabilistic bound on fp sum/dot of n terms with unit roundoff u: lambda*sqrt(n)*u
// (Higham & Mary 2019); lambda chosen so a correct implementation fails w.p. < 1e-7.
double gamma_prob(double n, double u);
inline constexpr double kLambda = 6.0;

struct Bounds {
  Outputs elem;  // per-element absolute error allowed, same names/shapes as golden
  // A declared approximation's own allowance (Case::grad_filter_eps; MATH.md "Declared
  // approximations"), per gradient element, on top of elem; empty for an exact case. An error
  // within elem + approx but beyond elem is "approximation within its tolerance", never a pass.
  Outputs approx;
  // predicted_tokens: indices whose logit is within the logit error of the max (ties under rounding)
  std::vector<std::vector<int64_t>> acceptable_predictions;
  int64_t ambiguous_tokens = 0;  // tokens with more than one acceptable prediction
  double logit_dtype_u = 0;      // unit roundoff of the dtype logits are materialized in
};

Bounds compute_bounds(const Case& c, const Inputs& in);

// Dtype the logits (and grad logits) of a conforming implementation may be stored in.
DType logits_dtype(const Case& c);

}  // namespace flce
