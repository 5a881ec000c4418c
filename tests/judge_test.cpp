// The judge passes the golden itself, and catches each class of wrong answer,
// naming the output.
#include <gtest/gtest.h>

#include <cmath>

#include "oracles/golden.hpp"
#include "judge/judge.hpp"

using namespace flce;

struct Fixture {
  Case c;
  Inputs in;
  Outputs gold;
  Bounds b;
  explicit Fixture(Case cs) : c(cs), in(make_inputs(cs)), gold(golden(cs, in)), b(compute_bounds(cs, in)) {}
  // What a conforming bf16 implementation might return: golden rounded to its dtype.
  Outputs rounded() const {
    Outputs o = gold;
    for (auto& [n, t] : o)
      for (auto& v : t.data)
        if (t.dtype != DType::I64) v = round_to(t.dtype, static_cast<float>(v));
    return o;
  }
};

static Case rich_case() {
  Case c = example_case();
  c.BT = 16; c.H = 32; c.V = 48;
  c.bias = c.ce_weight = true;
  c.requires_grad.bias = true;
  c.label_smoothing = 0.1;
  c.lse_square_scale = 1e-3;
  c.return_z_loss = c.return_token_accuracy = c.return_predicted_tokens = true;
  c.ignore_fraction = 0.25;
  return c;
}

TEST(Judge, GoldenRoundedToOutputDtypePasses) {
  Fixture f(rich_case());
  auto v = judge("eager", f.c, f.gold, f.b, f.rounded());
  EXPECT_TRUE(v.pass()) << (v.first_failure() ? v.first_failure()->output + ": " + v.first_failure()->detail : "");
  EXPECT_GT(v.worst_ratio(), 0.0);
  EXPECT_LT(v.worst_ratio(), 1.0);
}

TEST(Judge, MissingOutputIsNamed) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got.erase("grad_weight");
  auto v = judge("eager", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->output, "grad_weight");
  EXPECT_EQ(v.first_failure()->finding, Flaw::MISSING);
}

TEST(Judge, WrongScaleOnOneOutputIsOutOfBounds) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  for (auto& v : got["grad_bias"].data) v *= 1.05;  // 5% off: far above bf16 rounding
  auto v = judge("compiled", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  const OutputVerdict* bad = v.first_failure();
  EXPECT_EQ(bad->output, "grad_bias");
  EXPECT_EQ(bad->finding, Flaw::OUT_OF_BOUNDS);
  EXPECT_GT(bad->worst_ratio, 1.0);
  EXPECT_GT(bad->max_ulp, 1.0);
  EXPECT_GT(bad->rel_fro, 0.01);
  for (auto& o : v.outputs) {
    if (o.output == "grad_bias") continue;
    EXPECT_EQ(o.finding, Flaw::OK) << o.output;
  }
}

TEST(Judge, DtypeMismatchAgainstEagerIsItsOwnFailure) {
  Fixture f(rich_case());
  Outputs eager = f.rounded(), compiled = f.rounded();
  compiled["grad_weight"].dtype = DType::F32;
  JudgeOptions opt;
  opt.dtype_reference = &eager;
  auto v = judge("compiled", f.c, f.gold, f.b, compiled, opt);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->finding, Flaw::DTYPE);
  EXPECT_EQ(v.first_failure()->output, "grad_weight");
}

TEST(Judge, NaNWhereFp64IsFiniteIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got["grad_input"].data[3] = NAN;
  auto v = judge("eager", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->finding, Flaw::NONFINITE);
  EXPECT_EQ(v.first_failure()->worst_index, 3);
}

TEST(Judge, ShapeMismatchIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got["loss"].shape = {1};
  auto v = judge("eager", f.c, f.gold, f.b, got);
  EXPECT_EQ(v.first_failure()->finding, Flaw::SHAPE);
}

TEST(Judge, WrongPredictionIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  for (size_t i = 0; i < got["predicted_tokens"].data.size(); ++i)
    if (got["predicted_tokens"].data[i] >= 0 && f.b.acceptable_predictions[i].size() == 1) {
      got["predicted_tokens"].data[i] = static_cast<double>((static_cast<int64_t>(got["predicted_tokens"].data[i]) + 1) % f.c.V);
      break;
    }
  auto v = judge("eager", f.c, f.gold, f.b, got);
  EXPECT_EQ(v.first_failure()->finding, Flaw::PREDICTION);
}

TEST(Judge, BoundsAreTightNotVacuous) {
  // An error of a few bf16 ulps in the logits dtype must be caught in grad_weight.
  Case c = rich_case();
  c.input_dtype = c.weight_dtype = DType::F32;
  Fixture f(c);
  Outputs got = f.rounded();
  for (auto& v : got["grad_weight"].data) v *= 1.0 + std::ldexp(1.0, -8);  // one bf16 ulp, relative
  EXPECT_FALSE(judge("eager", f.c, f.gold, f.b, got).pass()) << "fp32 case must not tolerate bf16-sized error";
}

TEST(Judge, UlpOf) {
  EXPECT_EQ(ulp_of(1.0, DType::BF16), std::ldexp(1.0, -7));
  EXPECT_EQ(ulp_of(1.0, DType::F32), std::ldexp(1.0, -23));
  EXPECT_EQ(ulp_of(0.0, DType::F16), std::ldexp(1.0, -24));
}
