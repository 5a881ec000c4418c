// Integer-only fp32 -> bf16/fp16 rounding matches IEEE round-to-nearest-even.
#include <gtest/gtest.h>

#include <cmath>

#include "case/dtype.hpp"

using namespace flce;

// Reference: round x to p significant bits (RNE) in double, with the format's exponent range.
static double ref_round(double x, int p, int emin, int emax) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e = std::max(std::ilogb(x), emin);
  double q = std::ldexp(1.0, e - (p - 1));
  double r = std::nearbyint(x / q) * q;  // default rounding mode: to nearest even
  double maxv = std::ldexp(2.0 - std::ldexp(1.0, 1 - p), emax);
  if (std::fabs(r) > maxv) return std::copysign(INFINITY, x);
  return r;
}

static void sweep(DType d, int p, int emin, int emax) {
  uint64_t checked = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 9973) {  // stride hits every exponent and many mantissas
    float f = bits_f32(static_cast<uint32_t>(u));
    float got = round_to(d, f);
    double want = ref_round(f, p, emin, emax);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(got));
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << dtype_name(d) << " bits 0x" << std::hex << u;
    ASSERT_EQ(std::signbit(got), std::signbit(f));
    ++checked;
  }
  EXPECT_GT(checked, 400000u);
}

TEST(DType, Bf16RoundingMatchesRNE) { sweep(DType::BF16, 8, -126, 127); }
TEST(DType, F16RoundingMatchesRNEWithSubnormalsAndOverflow) { sweep(DType::F16, 11, -14, 15); }

TEST(DType, F16EdgeCases) {
  EXPECT_EQ(round_to(DType::F16, 65504.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(round_to(DType::F16, 65520.0f)));  // tie rounds to even -> inf
  EXPECT_EQ(round_to(DType::F16, 65519.0f), 65504.0f);
  EXPECT_EQ(round_to(DType::F16, std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(round_to(DType::F16, std::ldexp(1.0f, -25)), 0.0f);                   // tie to even (0)
  EXPECT_EQ(round_to(DType::F16, std::ldexp(1.5f, -25)), std::ldexp(1.0f, -24));
}

TEST(DType, UnitRoundoff) {
  EXPECT_EQ(dtype_eps(DType::BF16), std::ldexp(1.0, -8));
  EXPECT_EQ(dtype_eps(DType::F16), std::ldexp(1.0, -11));
  EXPECT_EQ(dtype_eps(DType::F32), std::ldexp(1.0, -24));
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_FALSE(parse_dtype("fp8").has_value());
}
