#include "judge/bounds.hpp"

#include "oracles/golden.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flce {

double gamma_prob(double n, double u) { return kLambda * std::sqrt(std::max(n, 1.0)) * u; }

DType logits_dtype(const Case& c) {
  if (c.autocast == Autocast::BF16) return DType::BF16;
  if (c.autocast == Autocast::F16) return DType::F16;
  // the lower-precision operand decides (bf16 has the largest unit roundoff)
  auto rank = [](DType d) { return d == DType::BF16 ? 2 : d == DType::F16 ? 1 : 0; };
  return rank(c.input_dtype) >= rank(c.weight_dtype) ? c.input_dtype : c.weight_dtype;
}

namespace {

// Below fp32's smallest normal (the accumulation type) values carry no relative
// precision; errors of this size are noise, not findings.
constexpr double kFloor = 0x1p-125;

// Accuracy of the fp32 functions softcap's chain rule may go through, in ulps: tanhf and the
// full-range division x/y (no -prec-div) are both "2 (full range)" in the CUDA C++ Programming
// Guide's table of single-precision maximum ulp errors. One ulp is at most 2u relative.
constexpr double kTanhUlps = 2.0, kDivUlps = 2.0;

// The absolute error of storing a tiny value in d: up to the smallest *normal* value,
// because implementations may flush subnormals (torch's CPU fp16 GEMMs were seen to).
double underflow(DType d) {
  const int emin = d == DType::F16 ? -14 : d == DType::F64 ? -1022 : -126;
  return std::ldexp(1.0, emin);
}

bool ignored(const Case& c, int64_t t) { return t == c.ignore_index || t < 0 || t >= c.V; }

Bounds op_bounds(const Case& c, const Inputs& in) {
  const int64_t B = c.batch, M = c.V, K = c.BT, N = c.H;
  const double ua = dtype_eps(DType::F32), uo = dtype_eps(c.op_out_dtype());
  Tensor64 t;
  t.dtype = c.op_out_dtype();
  t.shape = c.batched() ? std::vector<int64_t>{B, M, N} : std::vector<int64_t>{M, N};
  t.data.assign(static_cast<size_t>(B * M * N), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double mag = 0, val = 0;
        for (int64_t k = 0; k < K; ++k) {
          double p = static_cast<double>(in.op_a[static_cast<size_t>((b * M + m) * K + k)]) *
                     static_cast<double>(in.x[static_cast<size_t>((b * K + k) * N + n)]);
          mag += std::fabs(p);
          val += p;
        }
        double cc = c.has_accumulator() ? in.op_c[static_cast<size_t>((b * M + m) * N + n)] : 0.0;
        // fp32 accumulation of K products, one extra add for C, then one ulp of the output
        // dtype (2u|out|): the contract rounds once (half an ulp), but library GEMMs may round
        // the product before adding C; the GPU box measured up to one bf16 ulp from cuBLASLt.
        t.data[static_cast<size_t>((b * M + m) * N + n)] =
            gamma_prob(static_cast<double>(K + 1), ua) * (mag + std::fabs(cc)) + 2 * uo * std::fabs(val + cc) +
            (c.op_out_dtype() == DType::F32 ? 0.0 : uo * mag) +  // product rounded to a bf16/fp16 out before + C
            underflow(c.op_out_dtype()) + kFloor;
      }
  Bounds bd;
  bd.elem["out"] = std::move(t);
  return bd;
}

}  // namespace

Bounds compute_bounds(const Case& c, const Inputs& in) {
  if (c.is_op()) return op_bounds(c, in);
  const int64_t BT = in.BT, H = c.H, V = c.V;
  const double uc = dtype_eps(logits_dtype(c)), ua = dtype_eps(DType::F32);
  const bool mean = c.reduction == Reduction::MEAN, none = c.reduction == Reduction::NONE;
  const double ls = c.label_smoothing, eps = ls / static_cast<double>(V), lsq = c.lse_square_scale;
  auto cw = [&](int64_t j) { return c.ce_weight ? static_cast<double>(in.ce_weight[static_cast<size_t>(j)]) : 1.0; };
  double w_sum = 0, N = 0, D = 0;
  for (int64_t j = 0; j < V; ++j) w_sum += cw(j);
  for (int64_t i = 0; i < BT; ++i)
    if (!ignored(c, in.target[static_cast<size_t>(i)])) {
      N += 1;
      D += cw(in.target[static_cast<size_t>(i)]);
    }
  const bool want_gi = c.requires_grad.input, want_gw = c.requires_grad.weight,
             want_gb = c.bias && c.requires_grad.bias;
  const DType acc_w = c.accum_dtype.value_or(c.weight_dtype);
  // Autocast rounds an operand wider than the logits dtype (fp32 x, W) into it before each
  // GEMM: u_c relative on every product term that operand enters (MATH.md items 1 and 5).
  const double u_xop = c.input_dtype != logits_dtype(c) ? uc : 0.0, u_wop = c.weight_dtype != logits_dtype(c) ? uc : 0.0;
  const double u_accw = std::max(dtype_eps(acc_w), ua);

  Bounds bd;
  bd.logit_dtype_u = uc;
  bd.acceptable_predictions.assign(static_cast<size_t>(BT), {});
  std::vector<double> loss_b(static_cast<size_t>(BT), 0), z_b(static_cast<size_t>(BT), 0),
      loss_abs(static_cast<size_t>(BT), 0), z_abs(static_cast<size_t>(BT), 0);
  std::vector<double> gi_e(want_gi ? static_cast<size_t>(BT * H) : 0, 0), gi_m(gi_e.size(), 0);
  std::vector<double> gw_e(want_gw ? static_cast<size_t>(V * H) : 0, 0), gw_m(gw_e.size(), 0);
  std::vector<double> gb_e(want_gb ? static_cast<size_t>(V) : 0, 0), gb_m(gb_e.size(), 0);
  // A split weight gradient (MATH.md item 12) rounds its softmax and target terms apart: their
  // accumulation errors scale with |p| + |y|, not |p - y| (gw_s/gb_s; empty: fused).
  const bool split = c.grad_weight_split;
  std::vector<double> gw_s(split ? gw_e.size() : 0, 0), gb_s(split ? gb_e.size() : 0, 0), S(static_cast<size_t>(V), 0);
  // The declared gradient filter's allowance (MATH.md "Declared approximations"): what dropping
  // every entry the filter may select could remove from each gradient element.
  const double f_eps = c.grad_filter_eps;
  std::vector<double> gi_a(f_eps > 0 ? gi_e.size() : 0, 0), gw_a(f_eps > 0 ? gw_e.size() : 0, 0),
      gb_a(f_eps > 0 ? gb_e.size() : 0, 0), A(static_cast<size_t>(V), 0);
  std::vector<double> z(static_cast<size_t>(V)), cap(static_cast<size_t>(V)), dz(static_cast<size_t>(V));
  std::vector<double> E(static_cast<size_t>(V)), G(static_cast<size_t>(V)), sm(static_cast<size_t>(V), 0.0);
  double ambiguous_acc = 0;
  // torch semantics: the reference path's own roundings in the loss dtype (MATH.md item 11).
  const bool torch_ref = c.semantics != Semantics::LIGER;
  const DType ldt = loss_dtype(c);
  const double u_o = torch_ref ? dtype_eps(ldt) : 0.0;

  for (int64_t i = 0; i < BT; ++i) {
    int64_t t = in.target[static_cast<size_t>(i)];
    if (ignored(c, t)) continue;
    const float* x = &in.x[static_cast<size_t>(i * H)];
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < V; ++j) {
      const float* w = &in.w[static_cast<size_t>(j * H)];
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < H; ++k) {
        double p = static_cast<double>(x[k]) * w[k];
        acc += p;
        mag += std::fabs(p);
      }
      if (c.bias) {
        acc += in.bias[static_cast<size_t>(j)];
        mag += std::fabs(in.bias[static_cast<size_t>(j)]);
      }
      z[static_cast<size_t>(j)] = acc;
      cap[static_cast<size_t>(j)] = c.softcap ? *c.softcap * std::tanh(acc / *c.softcap) : acc;
      // logit error: fp32 dot of H terms, rounding into the logits dtype, fp32 softcap evaluation
      // (softcap: the capped logit may be stored in the logits dtype again)
      // (bias: x@W^T may be rounded before the bias add, and again after it)
      dz[static_cast<size_t>(j)] = (gamma_prob(static_cast<double>(H + 1), ua) + u_xop + u_wop) * mag + uc * std::fabs(acc) +
                                   (c.bias ? uc * std::fabs(acc - in.bias[static_cast<size_t>(j)]) : 0.0) +
                                   (c.softcap ? uc * std::fabs(cap[static_cast<size_t>(j)]) : 0.0);
      m = std::max(m, cap[static_cast<size_t>(j)]);
    }
    double s = 0;
    int64_t amax = 0;
    for (int64_t j = 0; j < V; ++j) {
      s += std::exp(cap[static_cast<size_t>(j)] - m);
      // argmax as the golden takes it: first maximum, NaN never wins
      if (cap[static_cast<size_t>(j)] > cap[static_cast<size_t>(amax)] || std::isnan(cap[static_cast<size_t>(amax)])) amax = j;
    }
    const double lse = m + std::log(s);
    // lse is a p-weighted mean of the logits: its error is the p-weighted logit error,
    // plus the fp32 sum of V exponentials (relative error of the sum = absolute on lse).
    double d_lse = gamma_prob(static_cast<double>(V), ua);
    for (int64_t j = 0; j < V; ++j) d_lse += std::exp(cap[static_cast<size_t>(j)] - lse) * dz[static_cast<size_t>(j)];
    // torch semantics on CPU (MATH.md item 11): log_softmax keeps the sum of exponentials in the
    // loss dtype before its log, a relative rounding of the sum, so u_o absolute on lse.
    if (torch_ref && c.device == Device::CPU) d_lse += u_o;
    // A softmax stored in the logits dtype (MATH.md item 13): the shifted logit c_j - m rounds,
    // so does its exponential, and the sum of exponentials accumulates in that dtype.
    if (c.softmax_in_logits()) {
      d_lse += gamma_prob(static_cast<double>(V), uc);
      for (int64_t j = 0; j < V; ++j) {
        sm[static_cast<size_t>(j)] = uc * (std::fabs(cap[static_cast<size_t>(j)] - m) + 1);
        d_lse += std::exp(cap[static_cast<size_t>(j)] - lse) * sm[static_cast<size_t>(j)];
      }
    }
    // acceptable predictions: logits that can reach the maximum under their errors
    auto& acc_set = bd.acceptable_predictions[static_cast<size_t>(i)];
    for (int64_t j = 0; j < V; ++j)
      if (j == amax || cap[static_cast<size_t>(j)] + dz[static_cast<size_t>(j)] >= m - dz[static_cast<size_t>(amax)])
        acc_set.push_back(j);
    if (acc_set.size() > 1) {
      ++bd.ambiguous_tokens;
      ambiguous_acc += 1;
    }
    const double wy = cw(t), p_t = std::exp(cap[static_cast<size_t>(t)] - lse);
    const double scale = c.use_token_scaling ? p_t : 1.0;
    const double l_norm = mean ? 1.0 / D : 1.0, z_norm = mean ? 1.0 / N : 1.0;
    double l = (1 - ls) * wy * (lse - cap[static_cast<size_t>(t)]);
    // |d loss_i| <= (1-ls) w_y (d_lse + dc_y) + eps sum_j w_j (d_lse + dc_j) + 2 lsq |lse| d_lse
    double dl = (1 - ls) * wy * (d_lse + dz[static_cast<size_t>(t)]);
    for (int64_t j = 0; j < V; ++j) {
      l += eps * cw(j) * (lse - cap[static_cast<size_t>(j)]);
      dl += eps * cw(j) * (d_lse + dz[static_cast<size_t>(j)]);
    }
    // torch semantics (MATH.md item 11): the reference path cross_entropy(logits) stores
    // log_softmax in the loss dtype (each log-prob rounds once: u_o |z_j - lse|), multiplies a
    // class weight in that dtype, and with label smoothing sums w_j lp_j per token (rounded
    // once), reduces that sum apart (two roundings: sum, division) and mixes (1-ls) nll +
    // (ls/V) smooth (three roundings).
    if (torch_ref) {
      const double lp_t = std::fabs(lse - cap[static_cast<size_t>(t)]);
      dl += (1 - ls) * wy * u_o * lp_t * (c.ce_weight ? 2 : 1);
      if (ls > 0) {
        double sm = 0;
        for (int64_t j = 0; j < V; ++j) sm += cw(j) * std::fabs(lse - cap[static_cast<size_t>(j)]);
        dl += eps * u_o * sm * ((c.ce_weight ? 3 : 2) + (none ? 0 : 2)) + 3 * u_o * ((1 - ls) * wy * lp_t + eps * sm);
      }
    }
    const double zl = lsq * lse * lse;
    // z-loss: lse may also be carried in the logits dtype before squaring
    double dzl = 2 * lsq * std::fabs(lse) * (d_lse + uc * std::fabs(lse));
    double val = l * l_norm + zl * z_norm;
    // token scaling multiplies by p_t (Liger: a softmax in the logits dtype): relative error
    // dc_t + d_lse + u_c, and absolute underflow of the logits dtype.
    // (expm1: a logit error of size d moves exp() by a factor up to e^d, not 1 + d)
    const double d_scale = c.use_token_scaling ? scale * std::expm1(dz[static_cast<size_t>(t)] + d_lse + uc) + underflow(logits_dtype(c)) : 0.0;
    // the z term may reach the loss through its z_loss-dtype copy (one rounding)
    dzl += dtype_eps(c.input_dtype) * std::fabs(zl);
    double e_tok = scale * (dl * l_norm + dzl * z_norm) + d_scale * std::fabs(l * l_norm + zl * z_norm);
    loss_b[static_cast<size_t>(i)] = e_tok + 4 * ua * std::fabs(scale * val);
    loss_abs[static_cast<size_t>(i)] = std::fabs(scale * val);
    z_b[static_cast<size_t>(i)] = scale * dzl * z_norm + d_scale * std::fabs(zl * z_norm);
    z_abs[static_cast<size_t>(i)] = std::fabs(scale * zl * z_norm);

    if (!(want_gi || want_gw || want_gb)) continue;
    const double up = std::fabs(none ? static_cast<double>(in.token_grad[static_cast<size_t>(i)]) : c.grad_output);
    const double coef = (1 - ls) * wy * l_norm + eps * w_sum * l_norm + 2 * lsq * std::fabs(lse) * z_norm;
    for (int64_t j = 0; j < V; ++j) {
      double p = std::exp(cap[static_cast<size_t>(j)] - lse);
      double g = (1 - ls) * wy * (p - (j == t)) * l_norm + eps * (w_sum * p - cw(j)) * l_norm +
                 2 * lsq * lse * p * z_norm;
      double th = c.softcap ? std::tanh(z[static_cast<size_t>(j)] / *c.softcap) : 0;
      double chain = c.softcap ? 1 - th * th : 1.0;
      const double g_unscaled = std::fabs(g) * up;  // before token scaling and the softcap chain rule
      g *= up * scale * chain;
      // |dp_j| <= p_j (dc_j + d_lse); z-loss's lse error; token scaling's p_t error;
      // softcap: 1 - tanh^2 cancels near saturation (absolute error ~2u of tanh's dtype plus
      // the logit error's effect); then rounding grad logits into the logits dtype.
      // A flushing exp (Triton's ex2.approx.ftz) loses a probability below fp32's smallest
      // normal outright, before the upstream gradient scales it (MATH.md item 4).
      // (torch semantics: log_softmax's backward takes p from the stored, rounded log-prob)
      // (a softmax in the logits dtype: the shifted logit and its exponential rounded, sm_j, and
      // the division by the sum rounded once more, u_c)
      const double u_sm = c.softmax_in_logits() ? sm[static_cast<size_t>(j)] + uc : 0.0;
      double dp = p * std::expm1(dz[static_cast<size_t>(j)] + d_lse + u_o * std::fabs(cap[static_cast<size_t>(j)] - lse) + u_sm) +
                  std::min(p, underflow(DType::F32));
      // 1 - t^2 with t = tanh(z/s) accurate to eps_t: tanh's own ulps, and t may be recovered
      // from the stored capped logit as c/s (a rounding into the logits dtype, a division);
      // squaring and subtracting round once each; the argument z/s is itself a division.
      double d_chain = 0.0;
      if (c.softcap) {
        const double s_cap = *c.softcap, eps_t = 2 * (kTanhUlps + kDivUlps) * ua + uc;
        d_chain = th * th * (2 * eps_t + ua) + ua * chain +
                  2 * std::fabs(th) * chain *
                      (dz[static_cast<size_t>(j)] / s_cap + 2 * kDivUlps * ua * std::fabs(z[static_cast<size_t>(j)] / s_cap));
      }
      // reduction='none': the per-token upstream gradient may be folded into G in the logits
      // dtype (rounded itself, then the product: 2 u_c more; MATH.md item 4).
      const double u_fold = none ? 2 * uc : 0.0;
      // (torch semantics: nll's backward scales by w_t / D in the loss dtype, one or two roundings)
      const double u_ref = torch_ref ? u_o * (c.ce_weight ? 2 : 1) : 0.0;
      double e = up * scale * chain * (coef * dp + 2 * lsq * p * d_lse * z_norm) + d_scale * g_unscaled * chain +
                 scale * g_unscaled * d_chain + (uc + u_fold + u_ref) * std::fabs(g) + underflow(logits_dtype(c)) + kFloor;
      G[static_cast<size_t>(j)] = g;
      E[static_cast<size_t>(j)] = e;
      if (split)  // each term of g in absolute value: the softmax part and the target part
        S[static_cast<size_t>(j)] = up * scale * chain *
                                    (((1 - ls) * wy * (p + (j == t)) + eps * (w_sum * p + cw(j))) * l_norm +
                                     2 * lsq * std::fabs(lse) * p * z_norm);
      // The filter sees its own |p - onehot|, off the exact one by at most dp: an entry it may
      // drop loses all of its computed value, at most |g| + e.
      if (f_eps > 0)
        A[static_cast<size_t>(j)] = std::fabs(p - (j == t)) < f_eps + dp ? std::fabs(g) + e : 0.0;
      if (!gb_a.empty()) gb_a[static_cast<size_t>(j)] += A[static_cast<size_t>(j)];
      if (want_gb) {
        gb_e[static_cast<size_t>(j)] += e;
        gb_m[static_cast<size_t>(j)] += std::fabs(g);
        if (split) gb_s[static_cast<size_t>(j)] += S[static_cast<size_t>(j)];
      }
    }
    for (int64_t j = 0; j < V; ++j) {
      const float* w = &in.w[static_cast<size_t>(j * H)];
      const double e = E[static_cast<size_t>(j)], ag = std::fabs(G[static_cast<size_t>(j)]), a = A[static_cast<size_t>(j)];
      if (want_gi)
        for (int64_t k = 0; k < H; ++k) {
          gi_e[static_cast<size_t>(i * H + k)] += e * std::fabs(w[k]);
          gi_m[static_cast<size_t>(i * H + k)] += ag * std::fabs(w[k]);
          if (a > 0) gi_a[static_cast<size_t>(i * H + k)] += a * std::fabs(w[k]);
        }
      if (want_gw)
        for (int64_t k = 0; k < H; ++k) {
          gw_e[static_cast<size_t>(j * H + k)] += e * std::fabs(x[k]);
          gw_m[static_cast<size_t>(j * H + k)] += ag * std::fabs(x[k]);
          if (split) gw_s[static_cast<size_t>(j * H + k)] += S[static_cast<size_t>(j)] * std::fabs(x[k]);
          if (a > 0) gw_a[static_cast<size_t>(j * H + k)] += a * std::fabs(x[k]);
        }
    }
  }

  const double tiny = kFloor;
  // `red`: the magnitude the accumulation rounds (mag itself, or a split gradient's |p| + |y| form);
  // the one rounding into the output dtype is relative to the result, at most mag.
  auto finish = [&](std::vector<double>& e, const std::vector<double>& mag, double n_red, double u_red, DType out,
                    const std::vector<double>* red = nullptr) {
    for (size_t k = 0; k < e.size(); ++k)
      e[k] += gamma_prob(n_red, u_red) * (red ? (*red)[k] : mag[k]) + dtype_eps(out) * mag[k] + underflow(out) + tiny;
  };
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  // reductions over BT tokens accumulate in fp32, then round once into the loss dtype; under
  // torch semantics on CPU, nll_loss sums the tokens and their weights in the loss dtype itself,
  // 16 to a partial sum in a cascade (aten LossNLL.cpp): an element meets up to 15 additions
  // per level and 8 in the final combine, in the loss, and again in D for a mean.
  double g_red = gamma_prob(static_cast<double>(BT), ua);
  if (torch_ref && c.device == Device::CPU) {
    int levels = 1;
    while (levels < 15 && (int64_t{1} << (4 * levels)) < BT) ++levels;
    const double adds = std::min(static_cast<double>(BT - 1), 15.0 * levels + 8);  // never more than BT - 1
    g_red = (adds > 0 ? gamma_prob(adds, u_o) * (mean ? 2 : 1) : 0.0) + gamma_prob(static_cast<double>(BT), ua);
  }
  if (none) {
    for (size_t k = 0; k < loss_b.size(); ++k) loss_b[k] += dtype_eps(ldt) * loss_abs[k] + underflow(ldt) + tiny;
    bd.elem["loss"] = Tensor64{{BT}, ldt, loss_b};
  } else {
    double L = sum(loss_b) + (g_red + dtype_eps(ldt)) * sum(loss_abs) + underflow(ldt) + tiny;
    bd.elem["loss"] = Tensor64{{}, ldt, {L}};
  }
  if (c.return_z_loss) {
    double uz = dtype_eps(c.input_dtype);
    if (none) {
      for (size_t k = 0; k < z_b.size(); ++k) z_b[k] += uz * z_abs[k] + underflow(c.input_dtype) + tiny;
      bd.elem["z_loss"] = Tensor64{{BT}, c.input_dtype, z_b};
    } else {
      // per-token z stored in the input dtype, then summed
      double Z = sum(z_b) + (uz + gamma_prob(static_cast<double>(BT), uz)) * sum(z_abs) +
                 static_cast<double>(BT + 1) * underflow(c.input_dtype) + tiny;
      bd.elem["z_loss"] = Tensor64{{}, c.input_dtype, {Z}};
    }
  }
  if (c.return_token_accuracy) {
    if (none) {
      std::vector<double> a(static_cast<size_t>(BT), 0);
      for (int64_t i = 0; i < BT; ++i) a[static_cast<size_t>(i)] = bd.acceptable_predictions[static_cast<size_t>(i)].size() > 1 ? 1.0 : 0.0;
      bd.elem["token_accuracy"] = Tensor64{{BT}, DType::F32, a};
    } else {
      double a = N > 0 ? ambiguous_acc / N : 0.0;
      bd.elem["token_accuracy"] = Tensor64{{}, DType::F32, {a + gamma_prob(static_cast<double>(BT), ua) + tiny}};
    }
  }
  if (c.return_predicted_tokens) bd.elem["predicted_tokens"] = Tensor64{{BT}, DType::I64, std::vector<double>(static_cast<size_t>(BT), 0.0)};
  // grad_input sums V products per element; grad_weight/grad_bias sum BT, possibly in the weight dtype.
  for (size_t k = 0; k < gi_e.size(); ++k) gi_e[k] += u_wop * gi_m[k];  // G @ W: W rounded under autocast
  for (size_t k = 0; k < gw_e.size(); ++k) gw_e[k] += u_xop * gw_m[k];  // G^T @ x: x rounded likewise
  if (want_gi) {
    finish(gi_e, gi_m, static_cast<double>(V), ua, c.input_dtype);
    bd.elem["grad_input"] = Tensor64{{BT, H}, c.input_dtype, std::move(gi_e)};
  }
  // grad_weight/grad_bias: an implementation may round each chunk's partial product into
  // the logits dtype before accumulating (Liger's fallback: mm(...).float()), at most one
  // rounding of u_c per partial sum, bounded by u_c times the magnitude.
  // Split (MATH.md item 12): each chunk's softmax term and target term are partial products of
  // their own, rounded apart, so the chunk rounding and the accumulation scale with both terms.
  for (size_t k = 0; k < gw_e.size(); ++k) gw_e[k] += uc * (split ? gw_s[k] : gw_m[k]);
  for (size_t k = 0; k < gb_e.size(); ++k) gb_e[k] += uc * (split ? gb_s[k] : gb_m[k]);
  if (want_gw) {
    finish(gw_e, gw_m, static_cast<double>(BT), u_accw, c.weight_dtype, split ? &gw_s : nullptr);
    bd.elem["grad_weight"] = Tensor64{{V, H}, c.weight_dtype, std::move(gw_e)};
  }
  if (want_gb) {
    finish(gb_e, gb_m, static_cast<double>(BT), u_accw, c.weight_dtype, split ? &gb_s : nullptr);
    bd.elem["grad_bias"] = Tensor64{{V}, c.weight_dtype, std::move(gb_e)};
  }
  if (f_eps > 0) {
    if (want_gi) bd.approx["grad_input"] = Tensor64{{BT, H}, c.input_dtype, std::move(gi_a)};
    if (want_gw) bd.approx["grad_weight"] = Tensor64{{V, H}, c.weight_dtype, std::move(gw_a)};
    if (want_gb) bd.approx["grad_bias"] = Tensor64{{V}, c.weight_dtype, std::move(gb_a)};
  }
  return bd;
}

}  // namespace flce
