// Plain fp64 host model of FLCE (same semantics as kernels/reference_flce.hpp), used only
// by tests/gpu_reference_test.cpp to check the CUDA reference on small cases. Operands
// are rounded to the GEMM operand dtype first (that is part of the semantics under
// autocast); everything after that is exact-ish double arithmetic.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference_plan.hpp"
#include "case/inputs.hpp"

namespace flce::test {

struct HostFlce {
  std::vector<double> loss_rows, z_rows, acc_rows;
  std::vector<int64_t> pred;
  std::vector<double> logits;  // [BT, V], softcapped
  double loss = 0, z = 0, acc = 0;
  std::vector<double> gi, gw, gb;  // [BT,H], [V,H], [V]
};

inline HostFlce host_flce64(const Case& c, const Inputs& in) {
  const int64_t BT = in.BT, H = in.H, V = in.V;
  const DType op = gemm_operand_dtype(c);
  std::vector<double> x(in.x.size()), w(in.w.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = round_to(op, in.x[i]);
  for (size_t i = 0; i < w.size(); ++i) w[i] = round_to(op, in.w[i]);
  auto ignored = [&](int64_t t) { return t == c.ignore_index || t < 0 || t >= V; };
  auto cw = [&](int64_t j) { return c.ce_weight ? static_cast<double>(in.ce_weight[j]) : 1.0; };
  double N = 0, D = 0, Wsum = 0;
  for (int64_t i = 0; i < BT; ++i)
    if (!ignored(in.target[i])) N += 1, D += cw(in.target[i]);
  for (int64_t j = 0; j < V; ++j) Wsum += cw(j);
  const bool mean = c.reduction == Reduction::MEAN, none = c.reduction == Reduction::NONE;
  const double Dn = mean ? D : 1, Nn = mean ? N : 1, ls = c.label_smoothing, eps = ls / V, lsq = c.lse_square_scale;

  HostFlce r;
  r.loss_rows.assign(BT, 0), r.z_rows.assign(BT, 0), r.acc_rows.assign(BT, 0), r.pred.assign(BT, -1);
  r.logits.assign(BT * V, 0);
  std::vector<double> G(BT * V, 0.0);
  for (int64_t i = 0; i < BT; ++i) {
    std::vector<double> z(V), cc(V);
    for (int64_t j = 0; j < V; ++j) {
      double s = c.bias ? static_cast<double>(in.bias[j]) : 0.0;
      for (int64_t k = 0; k < H; ++k) s += x[i * H + k] * w[j * H + k];
      z[j] = s;
      cc[j] = c.softcap ? *c.softcap * std::tanh(s / *c.softcap) : s;
      r.logits[i * V + j] = cc[j];
    }
    const int64_t y = in.target[i];
    if (ignored(y)) continue;
    double m = -INFINITY;
    int64_t am = 0;
    for (int64_t j = 0; j < V; ++j)
      if (cc[j] > m) m = cc[j], am = j;
    double d = 0, swc = 0;
    for (int64_t j = 0; j < V; ++j) d += std::exp(cc[j] - m), swc += cw(j) * cc[j];
    const double lse = m + std::log(d), py = std::exp(cc[y] - lse);
    double loss = (1 - ls) * cw(y) * (lse - cc[y]) + eps * (Wsum * lse - swc);
    double zl = lsq * lse * lse;
    double scale = c.use_token_scaling ? py : 1.0;
    r.loss_rows[i] = scale * (loss / Dn + zl / Nn);
    r.z_rows[i] = scale * zl / Nn;
    r.pred[i] = am;
    r.acc_rows[i] = am == y;
    double F = (none ? static_cast<double>(in.token_grad[i]) : c.grad_output) * scale;
    for (int64_t j = 0; j < V; ++j) {
      double p = std::exp(cc[j] - lse);
      double g = ((1 - ls) * cw(y) * (p - (j == y)) + eps * (Wsum * p - cw(j))) / Dn + 2 * lsq * lse * p / Nn;
      if (c.softcap) {
        double t = std::tanh(z[j] / *c.softcap);
        g *= 1 - t * t;
      }
      G[i * V + j] = F * g;
    }
  }
  for (int64_t i = 0; i < BT; ++i) r.loss += r.loss_rows[i], r.z += r.z_rows[i], r.acc += r.acc_rows[i];
  r.acc /= N;  // NaN when all rows are ignored
  if (mean && N == 0 && nan_if_all_ignored(c)) r.loss = NAN;
  r.gi.assign(BT * H, 0), r.gw.assign(V * H, 0), r.gb.assign(V, 0);
  for (int64_t i = 0; i < BT; ++i)
    for (int64_t j = 0; j < V; ++j) {
      const double g = G[i * V + j];
      if (g == 0) continue;
      r.gb[j] += g;
      for (int64_t k = 0; k < H; ++k) {
        r.gi[i * H + k] += g * w[j * H + k];
        r.gw[j * H + k] += g * x[i * H + k];
      }
    }
  return r;
}

}  // namespace flce::test
