#include "case/inputs.hpp"

#include <algorithm>
#include <cmath>

namespace flce {

namespace {
int bit_length(uint64_t v) {
  int n = 0;
  while (v) { ++n; v >>= 1; }
  return n;
}
float pow2f(int e) {
  float r = 1.0f;
  for (; e > 0; --e) r *= 2.0f;
  for (; e < 0; ++e) r *= 0.5f;
  return r;
}
}  // namespace

GenSpec make_gen_spec(const Case& c, int64_t BT_override) {
  GenSpec g{};
  g.seed = c.seed;
  g.BT = BT_override > 0 ? BT_override : c.BT;
  g.H = c.H;
  g.V = c.V;
  g.batch = c.batch;
  g.x_dtype = c.input_dtype;
  g.w_dtype = c.weight_dtype;
  g.op_c_dtype = c.op_out_dtype();
  // W entries ~ 2^-e with 2^e ~ sqrt(H): logits have std ~1 in the normal regime.
  int e = (bit_length(static_cast<uint64_t>(c.H)) - 1) / 2;
  g.w_scale = pow2f(-e);
  bool large = c.regime == Regime::LARGE_LOGITS;
  g.x_scale = large ? 64.0f : 2.0f;
  g.b_scale = large ? 32.0f : 0.5f;
  g.op_a_scale = 0.0625f;
  g.confident = c.regime == Regime::CONFIDENT;
  // E|W_t|^2 = H w_scale^2 / 3 (gen_gauss has variance 1/3), so alpha W_t lifts the true logit by
  // ~ alpha H w_scale^2 / 3; in units of ln 2 that is confident_nat = 3 ln2 / (H w_scale^2).
  // confident_bits = bit length of V - 1 ~ log2 of the other classes' share (fp64 on the host,
  // one rounding to fp32: the same float on both sides).
  g.confident_bits = static_cast<float>(bit_length(static_cast<uint64_t>(std::max<int64_t>(c.V - 1, 0))));
  // (1 + 1/sqrt(H)): alpha W_t also moves the other logits (by alpha W_t.W_j, std ~ margin/sqrt(H));
  // measured: with it the median 1 - p_t is ~3e-3 at H=32, V=64, and ~25% of rows have
  // 1 - p_t in [5e-4, 1e-2), as a log-uniform spread over [1e-6, 0.5] would.
  g.confident_nat = static_cast<float>(0.6931471805599453 * 3.0 /
                                       (static_cast<double>(c.H) * g.w_scale * g.w_scale) *
                                       (1.0 + 1.0 / std::sqrt(static_cast<double>(c.H))));
  g.special_values = c.regime == Regime::SPECIAL_VALUES;
  g.weight_spread = c.regime == Regime::WEIGHT_SPREAD;
  g.one_class = -1;
  if (c.regime == Regime::ONE_CLASS) {  // the class, from the seed: every batch of this case names it
    Philox4 r = philox_draw(c.seed, kStreamOneClass, 0);
    g.one_class = static_cast<int64_t>((static_cast<uint64_t>(r.v[0]) * static_cast<uint64_t>(c.V)) >> 32);
  }
  g.token_grad_ones = c.token_grad == TokenGrad::ONES;
  g.token_grad_spread = c.token_grad == TokenGrad::LOG_SPREAD;
  g.ignore_index = c.ignore_index;
  // ignore_fraction f -> threshold f * 2^32 (f = 1 ignores every row, f = 0 none).
  g.ignore_threshold = static_cast<uint64_t>(c.ignore_fraction * 4294967296.0);
  return g;
}

Inputs make_inputs(const Case& c, int64_t BT_override) {
  GenSpec g = make_gen_spec(c, BT_override);
  Inputs in;
  in.BT = g.BT;
  in.H = g.H;
  in.V = g.V;
  in.batch = g.batch;
  const int64_t rows = g.batch * g.BT;
  in.x.resize(static_cast<size_t>(rows * g.H));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < g.H; ++k) in.x[static_cast<size_t>(i * g.H + k)] = gen_input(g, i, k);
  if (c.is_op()) {
    in.op_a.resize(static_cast<size_t>(g.batch * g.V * g.BT));
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t m = 0; m < g.V; ++m)
        for (int64_t k = 0; k < g.BT; ++k)
          in.op_a[static_cast<size_t>((b * g.V + m) * g.BT + k)] = gen_op_a(g, b, m, k);
    if (c.has_accumulator()) {
      in.op_c.resize(static_cast<size_t>(g.batch * g.V * g.H));
      for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t m = 0; m < g.V; ++m)
          for (int64_t n = 0; n < g.H; ++n)
            in.op_c[static_cast<size_t>((b * g.V + m) * g.H + n)] = gen_op_c(g, b, m, n);
    }
    return in;
  }
  in.w.resize(static_cast<size_t>(g.V * g.H));
  for (int64_t j = 0; j < g.V; ++j)
    for (int64_t k = 0; k < g.H; ++k) in.w[static_cast<size_t>(j * g.H + k)] = gen_weight(g, j, k);
  if (c.bias) {
    in.bias.resize(static_cast<size_t>(g.V));
    for (int64_t j = 0; j < g.V; ++j) in.bias[static_cast<size_t>(j)] = gen_bias(g, j);
  }
  if (c.ce_weight) {
    in.ce_weight.resize(static_cast<size_t>(g.V));
    for (int64_t j = 0; j < g.V; ++j) in.ce_weight[static_cast<size_t>(j)] = gen_ce_weight(g, j);
  }
  in.target.resize(static_cast<size_t>(g.BT));
  in.token_grad.resize(static_cast<size_t>(g.BT));
  for (int64_t i = 0; i < g.BT; ++i) {
    in.target[static_cast<size_t>(i)] = gen_target(g, i);
    in.token_grad[static_cast<size_t>(i)] = gen_token_grad(g, i);
  }
  return in;
}

int64_t Inputs::n_ignored() const {
  int64_t n = 0;
  for (auto t : target) n += (t < 0 || t >= V);
  return n;
}

}  // namespace flce
