// Floating-point storage types flce handles, and exact round-to-nearest-even
// conversion from fp32 written with integer ops only, so CPU and GPU round
// bit-identically (no reliance on compiler intrinsics or FMA contraction).
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "case/hd.hpp"

namespace flce {

enum class DType : uint8_t { F32, F16, BF16, F64, I64 };

std::string_view dtype_name(DType d);             // "fp32", "fp16", "bf16", "fp64", "int64"
std::optional<DType> parse_dtype(std::string_view s);  // accepts the names above
double dtype_eps(DType d);                        // unit roundoff u = 2^-p (half an ulp at 1)
int dtype_mantissa_bits(DType d);                 // p, including the implicit bit

FLCE_HD uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
FLCE_HD float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// fp32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN.
FLCE_HD uint16_t f32_to_bf16_bits(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return static_cast<uint16_t>(u >> 16);
}
FLCE_HD float bf16_bits_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// fp32 -> IEEE binary16 bits, round to nearest even, subnormals and overflow to inf.
FLCE_HD uint16_t f32_to_f16_bits(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (a >= 0x38800000u) {                                             // normal half
    uint32_t mant_rounded = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((mant_rounded - 0x38000000u) >> 13));
  }
  if (a < 0x33000000u) return sign;  // below half the smallest subnormal: +-0
  // subnormal half: value = m * 2^-24, m in [0, 1024]
  uint32_t e = a >> 23;                  // biased fp32 exponent
  uint32_t m = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - e;             // so that result = m >> (shift) with rounding
  // value = m * 2^(e-150); in units of 2^-24: m * 2^(e-126) = m >> (126-e)
  uint32_t q = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}
FLCE_HD float f16_bits_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    // subnormal: m * 2^-24, exact in fp32
    int ex = -1;
    do { m <<= 1; ++ex; } while ((m & 0x400u) == 0);
    m &= 0x3ffu;
    return bits_f32(sign | (static_cast<uint32_t>(112 - ex) << 23) | (m << 13));
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

// Round an fp32 value to the nearest value representable in `d` (returned as fp32).
FLCE_HD float round_to(DType d, float f) {
  switch (d) {
    case DType::BF16: return bf16_bits_to_f32(f32_to_bf16_bits(f));
    case DType::F16: return f16_bits_to_f32(f32_to_f16_bits(f));
    default: return f;
  }
}

}  // namespace flce
