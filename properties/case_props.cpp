// Properties of the case model over generated cases.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "oracles/golden.hpp"
#include "judge/judge.hpp"
#include "case/sampler.hpp"
#include "properties/case_gen.hpp"

using namespace flce;

RC_GTEST_PROP(CaseProps, GeneratedCasesAreValidAndRoundTripExactly, ()) {
  gen::Limits lim;
  lim.allow_op_kinds = true;
  Case c = *gen::any_case(lim);
  RC_ASSERT(validation_errors(c).empty());
  std::string text = to_json(c);
  Case back = from_json(text);
  RC_ASSERT(back == c);
  RC_ASSERT(to_json(back) == text);
}

RC_GTEST_PROP(CaseProps, GoldenRoundedToOutputDtypeIsWithinBounds, ()) {
  // The judge's bounds are never tighter than rounding the exact answer once.
  gen::Limits lim;
  lim.allow_op_kinds = true;
  lim.allow_special_values = false;
  // As the sampler draws them: no value spreads on fp16, whose range they overflow (rounding the
  // exact answer gives inf there, which any correct fp16 implementation would show too).
  Case c = within_fp16_range(*gen::any_case(lim));
  Inputs in = make_inputs(c);
  Outputs g = golden(c, in);
  Bounds b = compute_bounds(c, in);
  Outputs r = g;
  for (auto& [n, t] : r)
    for (auto& v : t.data)
      if (t.dtype != DType::I64) v = round_to(t.dtype, static_cast<float>(v));
  auto v = judge("rounded", c, g, b, r);
  RC_ASSERT(v.pass());
}
