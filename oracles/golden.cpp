#include "oracles/golden.hpp"

#include <cmath>
#include <limits>

namespace flce {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_ignored(const Case& c, int64_t t) { return t == c.ignore_index || t < 0 || t >= c.V; }

// NaN-propagating max (std::max drops NaN depending on argument order).
double nan_max(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : (a > b ? a : b); }

struct Row {
  std::vector<double> z, cap;  // raw and softcapped logits
  double lse = 0, m = 0;
  int64_t argmax = 0;
};

void logits_row(const Case& c, const Inputs& in, int64_t i, Row& r) {
  const int64_t H = c.H, V = c.V;
  r.z.assign(static_cast<size_t>(V), 0.0);
  r.cap.assign(static_cast<size_t>(V), 0.0);
  const float* x = &in.x[static_cast<size_t>(i * H)];
  for (int64_t j = 0; j < V; ++j) {
    const float* w = &in.w[static_cast<size_t>(j * H)];
    double acc = 0.0;
    for (int64_t k = 0; k < H; ++k) acc += static_cast<double>(x[k]) * static_cast<double>(w[k]);
    if (c.bias) acc += in.bias[static_cast<size_t>(j)];
    r.z[static_cast<size_t>(j)] = acc;
    r.cap[static_cast<size_t>(j)] = c.softcap ? *c.softcap * std::tanh(acc / *c.softcap) : acc;
  }
  // logsumexp with max shift; argmax = first index of the maximum (NaN never wins).
  double m = -std::numeric_limits<double>::infinity();
  double best = -std::numeric_limits<double>::infinity();
  r.argmax = 0;
  for (int64_t j = 0; j < V; ++j) {
    double v = r.cap[static_cast<size_t>(j)];
    m = nan_max(m, v);
    if (v > best) { best = v; r.argmax = j; }
  }
  double s = 0.0;
  if (std::isinf(m) && m > 0) {
    s = kNaN;  // +inf logit: softmax is inf/inf
  } else {
    for (int64_t j = 0; j < V; ++j) s += std::exp(r.cap[static_cast<size_t>(j)] - m);
  }
  r.m = m;
  r.lse = std::isinf(m) && m > 0 ? std::numeric_limits<double>::infinity() : m + std::log(s);
  if (std::isnan(s)) r.lse = kNaN;
}

}  // namespace

std::vector<TokenStats> golden_token_stats(const Case& c, const Inputs& in) {
  std::vector<TokenStats> st(static_cast<size_t>(in.BT));
  Row r;
  for (int64_t i = 0; i < in.BT; ++i) {
    auto& s = st[static_cast<size_t>(i)];
    int64_t t = in.target[static_cast<size_t>(i)];
    s.ignored = is_ignored(c, t);
    logits_row(c, in, i, r);
    s.lse = r.lse;
    s.max_logit = r.m;
    s.p_target = s.ignored ? 0.0 : std::exp(r.cap[static_cast<size_t>(t)] - r.lse);
    double second = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < c.V; ++j)
      if (j != r.argmax) second = std::max(second, r.cap[static_cast<size_t>(j)]);
    s.top2_margin = c.V > 1 ? r.m - second : std::numeric_limits<double>::infinity();
  }
  return st;
}

namespace {

Outputs golden_op(const Case& c, const Inputs& in) {
  const int64_t B = c.batch, M = c.V, K = c.BT, N = c.H;
  Tensor64 out;
  out.dtype = c.op_out_dtype();
  out.shape = c.batched() ? std::vector<int64_t>{B, M, N} : std::vector<int64_t>{M, N};
  out.data.assign(static_cast<size_t>(B * M * N), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = c.has_accumulator() ? in.op_c[static_cast<size_t>((b * M + m) * N + n)] : 0.0;
        double dot = 0.0;
        for (int64_t k = 0; k < K; ++k)
          dot += static_cast<double>(in.op_a[static_cast<size_t>((b * M + m) * K + k)]) *
                 static_cast<double>(in.x[static_cast<size_t>((b * K + k) * N + n)]);
        out.data[static_cast<size_t>((b * M + m) * N + n)] = acc + dot;
      }
  return Outputs{{"out", std::move(out)}};
}

}  // namespace

Outputs golden(const Case& c, const Inputs& in) {
  if (c.is_op()) return golden_op(c, in);
  const int64_t BT = in.BT, H = c.H, V = c.V;
  const bool none = c.reduction == Reduction::NONE, mean = c.reduction == Reduction::MEAN;
  const double ls = c.label_smoothing, eps = ls / static_cast<double>(V), lsq = c.lse_square_scale;

  auto cw = [&](int64_t j) { return c.ce_weight ? static_cast<double>(in.ce_weight[static_cast<size_t>(j)]) : 1.0; };
  double w_sum = 0.0;
  for (int64_t j = 0; j < V; ++j) w_sum += cw(j);

  // Normalizers: N counts non-ignored tokens, D sums their class weights (= N without ce_weight).
  double N = 0.0, D = 0.0;
  for (int64_t i = 0; i < BT; ++i) {
    int64_t t = in.target[static_cast<size_t>(i)];
    if (is_ignored(c, t)) continue;
    N += 1.0;
    D += cw(t);
  }

  const bool want_gi = c.requires_grad.input, want_gw = c.requires_grad.weight,
             want_gb = c.bias && c.requires_grad.bias;
  std::vector<double> loss_tok(static_cast<size_t>(BT), 0.0), z_tok(static_cast<size_t>(BT), 0.0),
      acc_tok(static_cast<size_t>(BT), 0.0), pred(static_cast<size_t>(BT), -1.0);
  std::vector<double> gi(want_gi ? static_cast<size_t>(BT * H) : 0, 0.0),
      gw(want_gw ? static_cast<size_t>(V * H) : 0, 0.0), gb(want_gb ? static_cast<size_t>(V) : 0, 0.0);
  std::vector<double> g(static_cast<size_t>(V));
  double correct = 0.0;

  Row r;
  for (int64_t i = 0; i < BT; ++i) {
    int64_t t = in.target[static_cast<size_t>(i)];
    if (is_ignored(c, t)) continue;  // ignored rows: zero loss, zero gradient, accuracy 0, prediction -1
    logits_row(c, in, i, r);
    const double lse = r.lse, wy = cw(t);
    double ce = wy * (lse - r.cap[static_cast<size_t>(t)]);
    double smooth = 0.0;
    for (int64_t j = 0; j < V; ++j) smooth += cw(j) * (lse - r.cap[static_cast<size_t>(j)]);
    double l = (1.0 - ls) * ce + eps * smooth;
    double z = lsq * lse * lse;
    double scale = 1.0;  // token scaling: p_target, treated as a constant (detached)
    if (c.use_token_scaling) scale = std::exp(r.cap[static_cast<size_t>(t)] - lse);
    double l_norm = mean ? 1.0 / D : 1.0, z_norm = mean ? 1.0 / N : 1.0;
    loss_tok[static_cast<size_t>(i)] = scale * (l * l_norm + z * z_norm);
    z_tok[static_cast<size_t>(i)] = scale * z * z_norm;
    pred[static_cast<size_t>(i)] = static_cast<double>(r.argmax);
    acc_tok[static_cast<size_t>(i)] = r.argmax == t ? 1.0 : 0.0;
    correct += acc_tok[static_cast<size_t>(i)];

    if (!(want_gi || want_gw || want_gb)) continue;
    const double up = none ? static_cast<double>(in.token_grad[static_cast<size_t>(i)]) : c.grad_output;
    for (int64_t j = 0; j < V; ++j) {
      double p = std::exp(r.cap[static_cast<size_t>(j)] - lse);
      double dl = (1.0 - ls) * wy * (p - (j == t ? 1.0 : 0.0)) + eps * (w_sum * p - cw(j));
      double dz = 2.0 * lsq * lse * p;
      double d = up * scale * (dl * l_norm + dz * z_norm);
      if (c.softcap) {
        double th = std::tanh(r.z[static_cast<size_t>(j)] / *c.softcap);
        d *= 1.0 - th * th;
      }
      g[static_cast<size_t>(j)] = d;
    }
    const float* x = &in.x[static_cast<size_t>(i * H)];
    for (int64_t j = 0; j < V; ++j) {
      double d = g[static_cast<size_t>(j)];
      if (want_gb) gb[static_cast<size_t>(j)] += d;
      const float* w = &in.w[static_cast<size_t>(j * H)];
      if (want_gi)
        for (int64_t k = 0; k < H; ++k) gi[static_cast<size_t>(i * H + k)] += d * static_cast<double>(w[k]);
      if (want_gw)
        for (int64_t k = 0; k < H; ++k) gw[static_cast<size_t>(j * H + k)] += d * static_cast<double>(x[k]);
    }
  }

  Outputs out;
  const bool torch_sem = nan_if_all_ignored(c);
  // Liger returns fp32 losses; torch's cross_entropy returns the logits' dtype.
  const DType ldt = loss_dtype(c);
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  if (none) {
    out["loss"] = Tensor64{{BT}, ldt, loss_tok};
  } else {
    double L = sum(loss_tok);
    if (mean && N == 0.0 && torch_sem) L = kNaN;  // torch: 0/0; Liger: 0
    out["loss"] = Tensor64{{}, ldt, {L}};
  }
  if (c.return_z_loss)
    out["z_loss"] = none ? Tensor64{{BT}, c.input_dtype, z_tok} : Tensor64{{}, c.input_dtype, {sum(z_tok)}};
  if (c.return_token_accuracy)
    out["token_accuracy"] =
        none ? Tensor64{{BT}, DType::F32, acc_tok} : Tensor64{{}, DType::F32, {N > 0 ? correct / N : kNaN}};
  if (c.return_predicted_tokens) out["predicted_tokens"] = Tensor64{{BT}, DType::I64, pred};
  if (want_gi) out["grad_input"] = Tensor64{{BT, H}, c.input_dtype, std::move(gi)};
  if (want_gw) out["grad_weight"] = Tensor64{{V, H}, c.weight_dtype, std::move(gw)};
  if (want_gb) out["grad_bias"] = Tensor64{{V}, c.weight_dtype, std::move(gb)};
  return out;
}

}  // namespace flce
