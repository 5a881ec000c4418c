// Properties of the fp64 golden reference itself: it is the judge, so it is
// checked against the math from independent angles.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "oracles/golden.hpp"
#include "properties/case_gen.hpp"

using namespace flce;

namespace {

gen::Limits fd_limits() {
  gen::Limits l;
  l.max_BT = 6; l.max_H = 6; l.max_V = 9;
  l.allow_special_values = false;
  l.flce_only_fp32 = true;
  return l;
}

// The scalar whose gradient the golden reports: upstream-weighted loss.
double objective(const Case& c, const Inputs& in) {
  Outputs o = golden(c, in);
  const auto& L = o.at("loss").data;
  if (c.reduction != Reduction::NONE) return c.grad_output * L[0];
  double s = 0;
  for (size_t i = 0; i < L.size(); ++i) s += in.token_grad[i] * L[i];
  return s;
}

struct Difference {
  double value;  // derivative estimate
  double noise;  // what fp64 rounding of the objective alone can make it be off by
};

// Central difference on the fp32 values actually stored (the denominator uses them),
// with Richardson extrapolation over h and h/2 to cancel the O(h^2) term.
Difference central_difference(const Case& c, Inputs in, std::vector<float> Inputs::*field, size_t k) {
  const float x0 = (in.*field)[k];
  auto diff = [&](float h) {
    float xp = x0 + h, xm = x0 - h;
    (in.*field)[k] = xp;
    double fp = objective(c, in);
    (in.*field)[k] = xm;
    double fm = objective(c, in);
    (in.*field)[k] = x0;
    return (fp - fm) / (static_cast<double>(xp) - static_cast<double>(xm));
  };
  const float h = std::max(std::fabs(x0), 1.0f) * 0x1p-8f;
  double d1 = diff(h), d2 = diff(h / 2);
  // The objective's fp64 rounding scales with the magnitudes it cancels, not with its value: a
  // confident token's loss is lse - z_t, a difference of logits of size |z| left at ~1e-12 (a
  // random seed of CI found 3.9e-12 against a noise estimate of 2.2e-13 from |objective| alone).
  double mag = 0;
  for (int64_t i = 0; i < c.BT; ++i) {
    double zmax = 0;
    for (int64_t j = 0; j < c.V; ++j) {
      double z = c.bias ? std::fabs(static_cast<double>(in.bias[static_cast<size_t>(j)])) : 0.0;
      for (int64_t q = 0; q < c.H; ++q)
        z += std::fabs(static_cast<double>(in.x[static_cast<size_t>(i * c.H + q)]) *
                       static_cast<double>(in.w[static_cast<size_t>(j * c.H + q)]));
      zmax = std::max(zmax, z);
    }
    const double u = c.reduction == Reduction::NONE ? std::fabs(in.token_grad[static_cast<size_t>(i)]) : std::fabs(c.grad_output);
    mag += u * zmax;
  }
  return {(4 * d2 - d1) / 3, 1e-14 * (1 + std::fabs(objective(c, in)) + mag) / (h / 2)};
}

}  // namespace

RC_GTEST_PROP(GoldenProps, CentralDifferencesMatchAnalyticGradients, ()) {
  Case c = *gen::any_case(fd_limits());
  c.use_token_scaling = false;  // its scale is detached by definition: not a true derivative
  c.requires_grad = {true, true, c.bias};
  c.regime = *gen::pick({Regime::NORMAL, Regime::CONFIDENT});
  c.softcap = c.softcap ? std::optional<double>(std::max(*c.softcap, 2.0)) : std::nullopt;
  Inputs in = make_inputs(c);
  RC_PRE(std::isfinite(objective(c, in)));  // all-ignored under torch semantics is 0/0 by definition
  Outputs o = golden(c, in);
  double scale = 0;
  for (auto* nm : {"grad_input", "grad_weight", "grad_bias"})
    if (o.count(nm))
      for (double g : o[nm].data) scale = std::max(scale, std::fabs(g));
  auto check = [&](const char* nm, std::vector<float> Inputs::*field) {
    if (!o.count(nm)) return;
    const auto& g = o[nm].data;
    size_t k = *rc::gen::inRange<size_t>(0, g.size());
    Difference fd = central_difference(c, in, field, k);
    RC_ASSERT(std::fabs(fd.value - g[k]) <= 1e-3 * scale + 10 * fd.noise);
  };
  check("grad_input", &Inputs::x);
  check("grad_weight", &Inputs::w);
  check("grad_bias", &Inputs::bias);
}

RC_GTEST_PROP(GoldenProps, PermutingRowsPermutesPerTokenOutputs, ()) {
  gen::Limits lim;
  lim.allow_special_values = false;
  Case c = *gen::any_case(lim);
  c.reduction = Reduction::NONE;
  c.return_predicted_tokens = c.return_token_accuracy = c.return_z_loss = true;
  Inputs in = make_inputs(c);
  // rotate rows by r: a permutation that is never the identity when BT > 1
  const int64_t r = c.BT > 1 ? *rc::gen::inRange<int64_t>(1, c.BT) : 0;
  Inputs p = in;
  for (int64_t i = 0; i < c.BT; ++i) {
    int64_t src = (i + r) % c.BT;
    std::copy_n(&in.x[src * c.H], c.H, &p.x[i * c.H]);
    p.target[i] = in.target[src];
    p.token_grad[i] = in.token_grad[src];
  }
  Outputs a = golden(c, in), b = golden(c, p);
  for (auto* nm : {"loss", "z_loss", "token_accuracy", "predicted_tokens"})
    for (int64_t i = 0; i < c.BT; ++i) {
      double va = a[nm].data[(i + r) % c.BT], vb = b[nm].data[i];
      RC_ASSERT((va == vb) || (std::isnan(va) && std::isnan(vb)));
    }
  if (a.count("grad_weight"))
    for (size_t k = 0; k < a["grad_weight"].data.size(); ++k)
      RC_ASSERT(std::fabs(a["grad_weight"].data[k] - b["grad_weight"].data[k]) <=
                1e-12 * (1 + std::fabs(a["grad_weight"].data[k])));
}

RC_GTEST_PROP(GoldenProps, IgnoredRowsHaveZeroGradient, ()) {
  gen::Limits lim;
  Case c = *gen::any_case(lim);
  c.ignore_fraction = *gen::pick({0.5, 1.0, 0.25});
  c.requires_grad.input = true;
  Inputs in = make_inputs(c);
  Outputs o = golden(c, in);
  for (int64_t i = 0; i < c.BT; ++i)
    if (in.target[i] == c.ignore_index)
      for (int64_t k = 0; k < c.H; ++k) RC_ASSERT(o["grad_input"].data[i * c.H + k] == 0.0);
}

RC_GTEST_PROP(GoldenProps, SumEqualsMeanTimesWeightedCount, ()) {
  gen::Limits lim;
  lim.allow_special_values = false;
  Case c = *gen::any_case(lim);
  c.lse_square_scale = 0;  // z-loss normalizes by the unweighted count
  c.use_token_scaling = false;
  c.ignore_fraction = *gen::pick({0.0, 0.25});
  Inputs in = make_inputs(c);
  RC_PRE(in.n_ignored() < c.BT);
  double D = 0;
  for (auto t : in.target)
    if (t != c.ignore_index) D += c.ce_weight ? in.ce_weight[t] : 1.0;
  c.reduction = Reduction::MEAN;
  double mean = golden(c, in)["loss"].data[0];
  c.reduction = Reduction::SUM;
  double sum = golden(c, in)["loss"].data[0];
  RC_ASSERT(std::fabs(sum - mean * D) <= 1e-12 * (1 + std::fabs(sum)));
}

RC_GTEST_PROP(GoldenProps, NoSmoothingIsPlainCrossEntropy, ()) {
  gen::Limits lim;
  lim.allow_special_values = false;
  Case c = *gen::any_case(lim);
  c.label_smoothing = 0;
  c.lse_square_scale = 0;
  c.softcap.reset();
  c.use_token_scaling = false;
  c.reduction = Reduction::NONE;
  Inputs in = make_inputs(c);
  Outputs o = golden(c, in);
  for (int64_t i = 0; i < c.BT; ++i) {
    int64_t t = in.target[i];
    if (t == c.ignore_index) continue;
    // -log softmax(z)_t, written independently: log-sum-exp without a max shift in long double
    long double s = 0, zt = 0;
    for (int64_t j = 0; j < c.V; ++j) {
      long double z = 0;
      for (int64_t k = 0; k < c.H; ++k) z += static_cast<long double>(in.x[i * c.H + k]) * in.w[j * c.H + k];
      if (c.bias) z += in.bias[j];
      s += std::exp(z);
      if (j == t) zt = z;
    }
    double want = static_cast<double>((std::log(s) - zt) * (c.ce_weight ? in.ce_weight[t] : 1.0));
    RC_ASSERT(std::fabs(o["loss"].data[i] - want) <= 1e-9 * (1 + std::fabs(want)));
  }
}

RC_GTEST_PROP(GoldenProps, HugeSoftcapApproachesNoSoftcap, ()) {
  gen::Limits lim;
  lim.allow_special_values = false;
  Case c = *gen::any_case(lim);
  c.regime = Regime::NORMAL;
  Inputs in = make_inputs(c);
  c.softcap.reset();
  Outputs a = golden(c, in);
  c.softcap = 1e7;
  Outputs b = golden(c, in);
  for (auto& [nm, t] : a)
    for (size_t k = 0; k < t.data.size(); ++k) {
      double x = t.data[k], y = b[nm].data[k];
      if (std::isnan(x)) { RC_ASSERT(std::isnan(y)); continue; }
      RC_ASSERT(std::fabs(x - y) <= 1e-8 * (1 + std::fabs(x)));
    }
}
