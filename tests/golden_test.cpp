// Golden reference on cases small enough to check by hand, and Liger's semantics.
#include <gtest/gtest.h>

#include <cmath>

#include "oracles/golden.hpp"

using namespace flce;

// V=2, H=1, one token: logits (w0*x, w1*x); everything is closed-form.
static Inputs tiny(double x, double w0, double w1, int64_t target) {
  Inputs in;
  in.BT = 1; in.H = 1; in.V = 2;
  in.x = {static_cast<float>(x)};
  in.w = {static_cast<float>(w0), static_cast<float>(w1)};
  in.target = {target};
  in.token_grad = {1.0f};
  return in;
}
static Case tiny_case() {
  Case c;
  c.BT = 1; c.H = 1; c.V = 2;
  c.input_dtype = c.weight_dtype = DType::F32;
  return c;
}

TEST(Golden, TwoClassClosedForm) {
  Case c = tiny_case();
  c.return_predicted_tokens = c.return_token_accuracy = true;
  Inputs in = tiny(2.0, 0.5, -0.25, 0);  // logits 1, -0.5
  Outputs o = golden(c, in);
  double lse = std::log(std::exp(1.0) + std::exp(-0.5));
  EXPECT_NEAR(o["loss"].data[0], lse - 1.0, 1e-15);
  double p1 = std::exp(-0.5 - lse);
  // dL/dz = p - onehot; grad_x = sum_j g_j w_j; grad_w_j = g_j x
  EXPECT_NEAR(o["grad_input"].data[0], -p1 * 0.5 + p1 * -0.25, 1e-15);
  EXPECT_NEAR(o["grad_weight"].data[0], -p1 * 2.0, 1e-15);
  EXPECT_NEAR(o["grad_weight"].data[1], p1 * 2.0, 1e-15);
  EXPECT_EQ(o["predicted_tokens"].data[0], 0);
  EXPECT_EQ(o["token_accuracy"].data[0], 1.0);
  EXPECT_EQ(o["loss"].dtype, DType::F32);
  EXPECT_EQ(o["grad_weight"].dtype, DType::F32);
}

TEST(Golden, ZLossSoftcapAndSmoothingClosedForm) {
  Case c = tiny_case();
  c.lse_square_scale = 0.1;
  c.label_smoothing = 0.2;
  c.softcap = 3.0;
  c.return_z_loss = true;
  Inputs in = tiny(2.0, 1.0, -1.0, 1);
  Outputs o = golden(c, in);
  double c0 = 3 * std::tanh(2.0 / 3), c1 = 3 * std::tanh(-2.0 / 3);
  double lse = std::log(std::exp(c0) + std::exp(c1));
  double ce = lse - c1, smooth = 0.1 * ((lse - c0) + (lse - c1));
  double z = 0.1 * lse * lse;
  EXPECT_NEAR(o["loss"].data[0], 0.8 * ce + smooth + z, 1e-14);
  EXPECT_NEAR(o["z_loss"].data[0], z, 1e-15);
}

TEST(Golden, AllIgnoredMeanIsZeroUnderLigerAndNaNUnderTorch) {
  Case c = example_case();
  c.ignore_fraction = 1.0;
  c.return_token_accuracy = true;
  Inputs in = make_inputs(c);
  Outputs liger = golden(c, in);
  EXPECT_EQ(liger["loss"].data[0], 0.0);
  for (double g : liger["grad_input"].data) EXPECT_EQ(g, 0.0);
  EXPECT_TRUE(std::isnan(liger["token_accuracy"].data[0])) << "0 correct of 0 tokens";
  c.semantics = Semantics::TORCH;
  EXPECT_TRUE(std::isnan(golden(c, in)["loss"].data[0]));
}

TEST(Golden, IgnoredRowsHaveZeroGradientAndMinusOnePrediction) {
  Case c = example_case();
  c.BT = 32;
  c.ignore_fraction = 0.5;
  c.return_predicted_tokens = true;
  c.reduction = Reduction::NONE;
  Inputs in = make_inputs(c);
  Outputs o = golden(c, in);
  int ignored = 0;
  for (int64_t i = 0; i < c.BT; ++i) {
    if (in.target[i] != c.ignore_index) continue;
    ++ignored;
    EXPECT_EQ(o["loss"].data[i], 0.0);
    EXPECT_EQ(o["predicted_tokens"].data[i], -1.0);
    for (int64_t k = 0; k < c.H; ++k) EXPECT_EQ(o["grad_input"].data[i * c.H + k], 0.0);
  }
  EXPECT_GT(ignored, 0);
}

TEST(Golden, OutputsFollowRequiresGradAndFlags) {
  Case c = example_case();
  c.bias = true;
  c.requires_grad = {false, true, false};
  Outputs o = golden(c, make_inputs(c));
  EXPECT_FALSE(o.count("grad_input"));
  EXPECT_TRUE(o.count("grad_weight"));
  EXPECT_FALSE(o.count("grad_bias"));
  EXPECT_FALSE(o.count("z_loss"));
  EXPECT_EQ(o["grad_weight"].dtype, DType::BF16);
}

TEST(Golden, OpKindAddmmAccumulatesIntoC) {
  Case c;
  c.kind = Kind::ADDMM;
  c.BT = 3; c.H = 2; c.V = 2;
  c.input_dtype = c.weight_dtype = DType::BF16;
  c.accum_dtype = DType::F32;
  Inputs in = make_inputs(c);
  Outputs o = golden(c, in);
  ASSERT_EQ(o["out"].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(o["out"].dtype, DType::F32);
  double want = in.op_c[1];
  for (int k = 0; k < 3; ++k) want += static_cast<double>(in.op_a[k]) * in.x[k * 2 + 1];
  EXPECT_DOUBLE_EQ(o["out"].data[1], want);
}
