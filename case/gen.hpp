// Deterministic input generation shared by the CPU oracles and the CUDA kernels.
// Every element is a pure function of (GenSpec, stream, index) built from Philox and
// operations that are exact or correctly rounded in IEEE fp32 (integer->float of
// < 2^24, multiplication by powers of two, one add), so CPU and GPU produce the same
// bits. Values are returned as fp32 already rounded to their storage dtype.
#pragma once
#include <cstdint>

#include "case/dtype.hpp"
#include "case/hd.hpp"
#include "case/philox.hpp"

namespace flce {

enum Stream : uint32_t {
  kStreamX = 1, kStreamW = 2, kStreamBias = 3, kStreamCeWeight = 4, kStreamTarget = 5,
  kStreamTokenGrad = 6, kStreamSpecial = 7, kStreamOpA = 8, kStreamOpC = 9, kStreamConfident = 10,
  kStreamOneClass = 11,
};

// Plain-old-data parameters derived from a Case (see make_gen_spec in inputs.hpp).
struct GenSpec {
  uint64_t seed;
  int64_t BT, H, V, batch;
  DType x_dtype, w_dtype, op_c_dtype;
  float x_scale, w_scale, b_scale, op_a_scale;  // all powers of two
  // confident: row i adds alpha_i W_t to x_i, alpha_i = (confident_bits + u_i) * confident_nat,
  // u_i uniform in [1, 20] per row: true-class margin ~ ln(V) + u_i ln 2, so 1 - p_t ~ 2^-u_i
  // spans 0.5 .. 1e-6 log-uniformly (make_gen_spec; judge/MATH.md, Inputs).
  float confident_bits, confident_nat;
  bool confident, special_values, token_grad_ones, token_grad_spread, weight_spread;
  int64_t one_class;  // >= 0: every non-ignored target is this class (regime one_class)
  int64_t ignore_index;
  uint64_t ignore_threshold;  // row is ignored when a 32-bit draw < threshold (2^32 = all)
};

// Approximately normal, in [-2, 2), std ~0.577: sum of four 22-bit uniforms (exact in fp32).
FLCE_HD float gen_gauss(const Philox4& r) {
  int32_t s = static_cast<int32_t>((r.v[0] >> 10) + (r.v[1] >> 10) + (r.v[2] >> 10) + (r.v[3] >> 10)) -
              (int32_t(1) << 23);
  return static_cast<float>(s) * (1.0f / 4194304.0f);  // * 2^-22, exact
}
// Uniform in [0, 1) with 24 bits.
FLCE_HD float gen_unit(uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }

FLCE_HD int64_t gen_target(const GenSpec& g, int64_t row) {
  Philox4 r = philox_draw(g.seed, kStreamTarget, static_cast<uint64_t>(row));
  if (static_cast<uint64_t>(r.v[1]) < g.ignore_threshold) return g.ignore_index;
  if (g.one_class >= 0) return g.one_class;
  return static_cast<int64_t>((static_cast<uint64_t>(r.v[0]) * static_cast<uint64_t>(g.V)) >> 32);
}

FLCE_HD float gen_weight(const GenSpec& g, int64_t j, int64_t k) {
  uint64_t idx = static_cast<uint64_t>(j) * static_cast<uint64_t>(g.H) + static_cast<uint64_t>(k);
  return round_to(g.w_dtype, gen_gauss(philox_draw(g.seed, kStreamW, idx)) * g.w_scale);
}

FLCE_HD float gen_input(const GenSpec& g, int64_t i, int64_t k) {
  uint64_t idx = static_cast<uint64_t>(i) * static_cast<uint64_t>(g.H) + static_cast<uint64_t>(k);
  float v = gen_gauss(philox_draw(g.seed, kStreamX, idx)) * g.x_scale;
  if (g.confident) {
    int64_t t = gen_target(g, i);
    if (t >= 0 && t < g.V) {
      // Correctly rounded fp32 operations only (no contraction: -ffp-contract=off on the host,
      // explicit _rn intrinsics on the device), so both sides round identically.
      Philox4 r = philox_draw(g.seed, kStreamConfident, static_cast<uint64_t>(i));
#if defined(__CUDA_ARCH__)
      float u = __fadd_rn(1.0f, __fmul_rn(19.0f, gen_unit(r.v[0])));
      float alpha = __fmul_rn(__fadd_rn(g.confident_bits, u), g.confident_nat);
      v = __fadd_rn(v, __fmul_rn(gen_weight(g, t, k), alpha));
#else
      float u = 1.0f + 19.0f * gen_unit(r.v[0]);
      float alpha = (g.confident_bits + u) * g.confident_nat;
      float w = gen_weight(g, t, k) * alpha;
      v = v + w;
#endif
    }
  }
  if (g.special_values) {
    Philox4 s = philox_draw(g.seed, kStreamSpecial, idx);
    if ((s.v[0] & 63u) == 0u) {
      uint32_t which = s.v[1] % 3u;
      v = which == 0 ? bits_f32(0x7fc00000u) : (which == 1 ? bits_f32(0x7f800000u) : bits_f32(0xff800000u));
    }
  }
  return round_to(g.x_dtype, v);
}

FLCE_HD float gen_bias(const GenSpec& g, int64_t j) {
  return round_to(g.w_dtype, gen_gauss(philox_draw(g.seed, kStreamBias, static_cast<uint64_t>(j))) * g.b_scale);
}

// (1 + unit) * 2^e with e uniform in [-14, 13]: log-uniform-ish over 2^-14 .. 2^14 (~6e-5 .. 1.6e4),
// exact in fp32 (a 24-bit mantissa times a power of two).
FLCE_HD float gen_log_spread(const Philox4& r) {
  const int e = static_cast<int>(r.v[1] % 28u) - 14;
  return (1.0f + gen_unit(r.v[0])) * bits_f32(static_cast<uint32_t>(127 + e) << 23);
}

FLCE_HD float gen_ce_weight(const GenSpec& g, int64_t j) {
  Philox4 r = philox_draw(g.seed, kStreamCeWeight, static_cast<uint64_t>(j));
  return g.weight_spread ? gen_log_spread(r) : 0.5f + gen_unit(r.v[0]);
}

// Per-token upstream gradient for reduction "none".
FLCE_HD float gen_token_grad(const GenSpec& g, int64_t i) {
  if (g.token_grad_ones) return 1.0f;
  Philox4 r = philox_draw(g.seed, kStreamTokenGrad, static_cast<uint64_t>(i));
  return g.token_grad_spread ? gen_log_spread(r) : 0.5f + gen_unit(r.v[0]);
}

// Op-level cases: out[b] = C[b] + A[b] @ B[b] with A [V, BT] (grad_logits^T-like, x dtype),
// B [BT, H] (x rows) and C [V, H] in the output dtype.
FLCE_HD float gen_op_a(const GenSpec& g, int64_t b, int64_t m, int64_t k) {
  uint64_t idx = (static_cast<uint64_t>(b) * g.V + m) * static_cast<uint64_t>(g.BT) + k;
  return round_to(g.x_dtype, gen_gauss(philox_draw(g.seed, kStreamOpA, idx)) * g.op_a_scale);
}
FLCE_HD float gen_op_b(const GenSpec& g, int64_t b, int64_t k, int64_t n) {
  return gen_input(g, b * g.BT + k, n);
}
FLCE_HD float gen_op_c(const GenSpec& g, int64_t b, int64_t m, int64_t n) {
  uint64_t idx = (static_cast<uint64_t>(b) * g.V + m) * static_cast<uint64_t>(g.H) + n;
  return round_to(g.op_c_dtype, gen_gauss(philox_draw(g.seed, kStreamOpC, idx)));
}

}  // namespace flce
