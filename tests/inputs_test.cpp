// Deterministic inputs: same case, same bits; the knobs do what they say.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "oracles/golden.hpp"
#include "case/inputs.hpp"

using namespace flce;

static uint64_t fnv(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  for (float f : v) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

TEST(Inputs, SameCaseSameBits) {
  Case c = example_case();
  c.bias = c.ce_weight = true;
  Inputs a = make_inputs(c), b = make_inputs(c);
  EXPECT_EQ(fnv(a.x), fnv(b.x));
  EXPECT_EQ(fnv(a.w), fnv(b.w));
  EXPECT_EQ(a.target, b.target);
  c.seed += 1;
  EXPECT_NE(fnv(make_inputs(c).x), fnv(a.x));
}

// Pins the generator: any change to Philox, the transforms or the rounding breaks
// cross-machine reproducibility of every saved case, so it must be deliberate.
TEST(Inputs, PinnedBitsOfExampleCase) {
  Inputs in = make_inputs(example_case());
  EXPECT_EQ(fnv(in.x), 0xc231a590025c1999ull) << std::hex << fnv(in.x);
  EXPECT_EQ(fnv(in.w), 0xa107360ed76068b0ull) << std::hex << fnv(in.w);
}

TEST(Inputs, ValuesAreRepresentableInStorageDtype) {
  for (DType d : {DType::BF16, DType::F16, DType::F32}) {
    Case c = example_case();
    c.input_dtype = c.weight_dtype = d;
    c.bias = true;
    Inputs in = make_inputs(c);
    for (float v : in.x) ASSERT_EQ(round_to(d, v), v);
    for (float v : in.w) ASSERT_EQ(round_to(d, v), v);
    for (float v : in.bias) ASSERT_EQ(round_to(d, v), v);
  }
}

TEST(Inputs, IgnoreFractionEndpointsAreExact) {
  Case c = example_case();
  c.BT = 257;
  c.ignore_fraction = 0.0;
  EXPECT_EQ(make_inputs(c).n_ignored(), 0);
  c.ignore_fraction = 1.0;
  EXPECT_EQ(make_inputs(c).n_ignored(), 257);
  c.ignore_fraction = 0.5;
  int64_t n = make_inputs(c).n_ignored();
  EXPECT_GT(n, 90);
  EXPECT_LT(n, 167);
  for (auto t : make_inputs(c).target) EXPECT_TRUE(t == c.ignore_index || (t >= 0 && t < c.V));
}

TEST(Inputs, ConfidentRegimeMakesTrueClassProbable) {
  Case c = example_case();
  c.BT = 64; c.H = 256; c.V = 1000; c.input_dtype = c.weight_dtype = DType::F32;
  c.regime = Regime::CONFIDENT;
  Inputs in = make_inputs(c);
  auto st = golden_token_stats(c, in);
  int confident = 0;
  for (auto& s : st) confident += s.p_target > 0.99;
  EXPECT_GE(confident, 60) << "true-class probability > 0.99 for nearly every token";
}

TEST(Inputs, LargeLogitsRegimeIsLarge) {
  Case c = example_case();
  c.H = 64; c.V = 64; c.BT = 16;
  auto normal = golden_token_stats(c, make_inputs(c));
  c.regime = Regime::LARGE_LOGITS;
  auto large = golden_token_stats(c, make_inputs(c));
  double mn = 0, ml = 0;
  for (auto& s : normal) mn = std::max(mn, std::fabs(s.max_logit));
  for (auto& s : large) ml = std::max(ml, std::fabs(s.max_logit));
  EXPECT_LT(mn, 16);
  EXPECT_GT(ml, 50);
}

TEST(Inputs, SpecialValuesRegimePlantsNanAndInf) {
  Case c = example_case();
  c.BT = 64; c.H = 64;
  c.regime = Regime::SPECIAL_VALUES;
  Inputs in = make_inputs(c);
  int nan = 0, inf = 0;
  for (float v : in.x) { nan += std::isnan(v); inf += std::isinf(v); }
  EXPECT_GT(nan, 0);
  EXPECT_GT(inf, 0);
  EXPECT_LT(nan + inf, static_cast<int>(in.x.size()) / 16);
}

TEST(Inputs, ExtraShapeSharesLeadingRows) {
  Case c = example_case();
  Inputs a = make_inputs(c), b = make_inputs(c, 3);
  ASSERT_EQ(b.x.size(), static_cast<size_t>(3 * c.H));
  for (size_t k = 0; k < b.x.size(); ++k) EXPECT_EQ(a.x[k], b.x[k]);
}
