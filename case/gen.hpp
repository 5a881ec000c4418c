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
  kStreamTokenGrad = 6, kStreamSpecial = 7, kStreamOpA = 8, kStreamOpC = 9,
};

// Plain-old-data parameters derived from a Case (see make_gen_spec in inputs.hpp).
struct GenSpec {
  uint64_t seed;
  int64_t BT, H, V, batch;
  DType x_dtype, w_dtype, op_c_dtype;
  float x_scale, w_scale, b_scale, op_a_scale, confident_alpha;  // all powers of two
  bool confident, special_values, token_grad_ones;
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
      float w = gen_weight(g, t, k) * g.confident_alpha;  // exact: power-of-two scale
#if defined(__CUDA_ARCH__)
      v = __fadd_rn(v, w);
#else
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

FLCE_HD float gen_ce_weight(const GenSpec& g, int64_t j) {
  return 0.5f + gen_unit(philox_draw(g.seed, kStreamCeWeight, static_cast<uint64_t>(j)).v[0]);
}

// Per-token upstream gradient for reduction "none".
FLCE_HD float gen_token_grad(const GenSpec& g, int64_t i) {
  if (g.token_grad_ones) return 1.0f;
  return 0.5f + gen_unit(philox_draw(g.seed, kStreamTokenGrad, static_cast<uint64_t>(i)).v[0]);
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
