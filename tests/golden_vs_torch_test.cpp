// The fp64 golden reference against libtorch autograd in fp64 on random cases:
// linear + torch's own cross_entropy (weights, label smoothing, ignore_index), plus
// z-loss, softcap and token scaling composed from torch ops, differentiated by autograd.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "oracles/golden.hpp"
#include "case/sampler.hpp"

using namespace flce;
namespace F = torch::nn::functional;

namespace {

torch::Tensor t64(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat).to(torch::kDouble).clone();
}

Outputs autograd_reference(const Case& c, const Inputs& in) {
  auto x = t64(in.x, {in.BT, c.H}).requires_grad_(c.requires_grad.input);
  auto w = t64(in.w, {c.V, c.H}).requires_grad_(c.requires_grad.weight);
  torch::Tensor b;
  if (c.bias) b = t64(in.bias, {c.V}).requires_grad_(c.requires_grad.bias);
  auto tgt = torch::from_blob(const_cast<int64_t*>(in.target.data()), {in.BT}, torch::kLong).clone();
  auto logits = torch::matmul(x, w.t());
  if (c.bias) logits = logits + b;
  if (c.softcap) logits = *c.softcap * torch::tanh(logits / *c.softcap);
  auto valid = tgt.ne(c.ignore_index);
  const double N = valid.sum().item<double>();
  auto opts = F::CrossEntropyFuncOptions().reduction(torch::kNone).ignore_index(c.ignore_index).label_smoothing(c.label_smoothing);
  torch::Tensor cw;
  if (c.ce_weight) {
    cw = t64(in.ce_weight, {c.V});
    opts = opts.weight(cw);
  }
  auto ce = F::cross_entropy(logits, tgt, opts);  // per token, already weighted, 0 where ignored
  auto lse = torch::logsumexp(logits, -1);
  auto z = (c.lse_square_scale * lse * lse) * valid.to(torch::kDouble);
  double D = c.ce_weight ? (N > 0 ? cw.index_select(0, tgt.masked_select(valid)).sum().item<double>() : 0.0) : N;
  torch::Tensor scale = torch::ones({in.BT}, torch::kDouble);
  if (c.use_token_scaling) {
    auto p = torch::softmax(logits, -1).gather(1, tgt.clamp(0, c.V - 1).unsqueeze(1)).squeeze(1);
    scale = torch::where(valid, p, torch::zeros_like(p)).detach();
  }
  torch::Tensor per_tok;
  if (c.reduction == Reduction::MEAN)
    per_tok = N > 0 ? scale * (ce / D + z / N) : torch::zeros({in.BT}, torch::kDouble) * ce;  // keeps the graph
  else
    per_tok = scale * (ce + z);
  Outputs out;
  torch::Tensor loss = c.reduction == Reduction::NONE ? per_tok : per_tok.sum();
  if (c.requires_grad.input || c.requires_grad.weight || (c.bias && c.requires_grad.bias)) {
    torch::Tensor up = c.reduction == Reduction::NONE ? t64(in.token_grad, {in.BT})
                                                       : torch::full({}, c.grad_output, torch::kDouble);
    loss.backward(up);
  }
  auto put = [&](const char* n, const torch::Tensor& t) {
    Tensor64 r;
    for (auto s : t.sizes()) r.shape.push_back(s);
    auto h = t.detach().contiguous();
    r.data.assign(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
    out[n] = r;
  };
  put("loss", loss);
  if (c.requires_grad.input) put("grad_input", x.grad());
  if (c.requires_grad.weight) put("grad_weight", w.grad());
  if (c.bias && c.requires_grad.bias) put("grad_bias", b.grad());
  if (c.return_z_loss) {
    auto zs = scale * (c.reduction == Reduction::MEAN ? (N > 0 ? z / N : z * 0) : z);
    put("z_loss", c.reduction == Reduction::NONE ? zs : zs.sum());
  }
  if (c.return_predicted_tokens) {
    auto pred = torch::where(valid, logits.argmax(-1), torch::full_like(tgt, -1)).to(torch::kDouble);
    put("predicted_tokens", pred);
  }
  return out;
}

}  // namespace

class GoldenVsTorch : public ::testing::TestWithParam<int> {};

TEST_P(GoldenVsTorch, AgreesWithAutogradInFp64) {
  SampleSpace sp;
  sp.max_BT = 12; sp.max_H = 12; sp.max_V = 24;
  Case c = sample_case(2024, static_cast<uint64_t>(GetParam()), sp);
  Inputs in = make_inputs(c);
  Outputs g = golden(c, in);
  Outputs t = autograd_reference(c, in);
  SCOPED_TRACE(to_json(c, -1));
  for (auto& [n, tv] : t) {
    ASSERT_TRUE(g.count(n)) << n;
    const auto& gv = g[n];
    ASSERT_EQ(gv.shape, tv.shape) << n;
    double scale = 0;
    for (double v : tv.data) scale = std::max(scale, std::isfinite(v) ? std::fabs(v) : 0.0);
    for (size_t k = 0; k < tv.data.size(); ++k) {
      double a = gv.data[k], b = tv.data[k];
      if (std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a)) << n << "[" << k << "]";
        continue;
      }
      if (n == "predicted_tokens") {
        // argmax ties in fp64 are measure-zero except for V == 1 or equal logits
        EXPECT_EQ(a, b) << n << "[" << k << "]";
        continue;
      }
      EXPECT_NEAR(a, b, 1e-11 * (1 + scale)) << n << "[" << k << "]";
    }
  }
}

// 240 cases: every flag of the sampler exercised (bias, ce_weight, smoothing, z-loss,
// softcap, token scaling, ignore fractions 0..1, three reductions, upstream grads).
INSTANTIATE_TEST_SUITE_P(Random, GoldenVsTorch, ::testing::Range(0, 240));

TEST(GoldenVsTorchCoverage, SamplerExercisesEveryFlag) {
  SampleSpace sp;
  int bias = 0, cw = 0, ls = 0, z = 0, cap = 0, ts = 0, none = 0, sum = 0, all_ign = 0, ac = 0;
  for (int k = 0; k < 240; ++k) {
    Case c = sample_case(2024, static_cast<uint64_t>(k), sp);
    bias += c.bias; cw += c.ce_weight; ls += c.label_smoothing > 0; z += c.lse_square_scale > 0;
    cap += c.softcap.has_value(); ts += c.use_token_scaling; none += c.reduction == Reduction::NONE;
    sum += c.reduction == Reduction::SUM; all_ign += c.ignore_fraction == 1.0; ac += c.autocast != Autocast::NONE;
  }
  for (int n : {bias, cw, ls, z, cap, ts, none, sum, all_ign}) EXPECT_GE(n, 10);
}
