// The judge passes the golden itself, and catches each class of wrong answer,
// naming the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "oracles/golden.hpp"
#include "judge/judge.hpp"
#include "case/case.hpp"

#include <string>

using namespace flce;

struct Fixture {
  Case c;
  Inputs in;
  Outputs gold;
  Bounds b;
  explicit Fixture(Case cs) : c(cs), in(make_inputs(cs)), gold(golden(cs, in)), b(compute_bounds(cs, in)) {}
  // What a conforming bf16 implementation might return: golden rounded to its dtype.
  Outputs rounded() const {
    Outputs o = gold;
    for (auto& [n, t] : o)
      for (auto& v : t.data)
        if (t.dtype != DType::I64) v = round_to(t.dtype, static_cast<float>(v));
    return o;
  }
};

static Case rich_case() {
  Case c = example_case();
  c.BT = 16; c.H = 32; c.V = 48;
  c.bias = c.ce_weight = true;
  c.requires_grad.bias = true;
  c.label_smoothing = 0.1;
  c.lse_square_scale = 1e-3;
  c.return_z_loss = c.return_token_accuracy = c.return_predicted_tokens = true;
  c.ignore_fraction = 0.25;
  return c;
}

TEST(Judge, GoldenRoundedToOutputDtypePasses) {
  Fixture f(rich_case());
  auto v = judge("eager", f.c, f.gold, f.b, f.rounded());
  EXPECT_TRUE(v.pass()) << (v.first_failure() ? v.first_failure()->output + ": " + v.first_failure()->detail : "");
  EXPECT_GT(v.worst_ratio(), 0.0);
  EXPECT_LT(v.worst_ratio(), 1.0);
}

TEST(Judge, MissingOutputIsNamed) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got.erase("grad_weight");
  auto v = judge("eager", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->output, "grad_weight");
  EXPECT_EQ(v.first_failure()->finding, Flaw::MISSING);
}

TEST(Judge, WrongScaleOnOneOutputIsOutOfBounds) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  for (auto& v : got["grad_bias"].data) v *= 1.05;  // 5% off: far above bf16 rounding
  auto v = judge("compiled", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  const OutputVerdict* bad = v.first_failure();
  EXPECT_EQ(bad->output, "grad_bias");
  EXPECT_EQ(bad->finding, Flaw::OUT_OF_BOUNDS);
  EXPECT_GT(bad->worst_ratio, 1.0);
  EXPECT_GT(bad->max_ulp, 1.0);
  EXPECT_GT(bad->rel_fro, 0.01);
  for (auto& o : v.outputs) {
    if (o.output == "grad_bias") continue;
    EXPECT_EQ(o.finding, Flaw::OK) << o.output;
  }
}

TEST(Judge, DtypeMismatchAgainstEagerIsItsOwnFailure) {
  Fixture f(rich_case());
  Outputs eager = f.rounded(), compiled = f.rounded();
  compiled["grad_weight"].dtype = DType::F32;
  JudgeOptions opt;
  opt.dtype_reference = &eager;
  auto v = judge("compiled", f.c, f.gold, f.b, compiled, opt);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->finding, Flaw::DTYPE);
  EXPECT_EQ(v.first_failure()->output, "grad_weight");
}

TEST(Judge, NaNWhereFp64IsFiniteIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got["grad_input"].data[3] = NAN;
  auto v = judge("eager", f.c, f.gold, f.b, got);
  ASSERT_FALSE(v.pass());
  EXPECT_EQ(v.first_failure()->finding, Flaw::NONFINITE);
  EXPECT_EQ(v.first_failure()->worst_index, 3);
}

TEST(Judge, ShapeMismatchIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  got["loss"].shape = {1};
  auto v = judge("eager", f.c, f.gold, f.b, got);
  EXPECT_EQ(v.first_failure()->finding, Flaw::SHAPE);
}

TEST(Judge, WrongPredictionIsCaught) {
  Fixture f(rich_case());
  Outputs got = f.rounded();
  for (size_t i = 0; i < got["predicted_tokens"].data.size(); ++i)
    if (got["predicted_tokens"].data[i] >= 0 && f.b.acceptable_predictions[i].size() == 1) {
      got["predicted_tokens"].data[i] = static_cast<double>((static_cast<int64_t>(got["predicted_tokens"].data[i]) + 1) % f.c.V);
      break;
    }
  auto v = judge("eager", f.c, f.gold, f.b, got);
  EXPECT_EQ(v.first_failure()->finding, Flaw::PREDICTION);
}

TEST(Judge, BoundsAreTightNotVacuous) {
  // An error of a few bf16 ulps in the logits dtype must be caught in grad_weight.
  Case c = rich_case();
  c.input_dtype = c.weight_dtype = DType::F32;
  Fixture f(c);
  Outputs got = f.rounded();
  for (auto& v : got["grad_weight"].data) v *= 1.0 + std::ldexp(1.0, -8);  // one bf16 ulp, relative
  EXPECT_FALSE(judge("eager", f.c, f.gold, f.b, got).pass()) << "fp32 case must not tolerate bf16-sized error";
}

TEST(Judge, UlpOf) {
  EXPECT_EQ(ulp_of(1.0, DType::BF16), std::ldexp(1.0, -7));
  EXPECT_EQ(ulp_of(1.0, DType::F32), std::ldexp(1.0, -23));
  EXPECT_EQ(ulp_of(0.0, DType::F16), std::ldexp(1.0, -24));
}

// Three Liger 0.8.5 findings of the H200 (issue #20 item 6; docs/benchmarks-history.md, third round), each
// case as the campaign drew it and each number as flce measured it there. The bound terms that
// cover them are derived (judge/MATH.md item 4), so each test also shows the bound stays tight.
namespace {
// A case as the H200 ran it: the output element a finding named, its fp64 value, Liger's value.
struct Seen {
  const char* fields;
  size_t index;
  double fp64, h200;
};

// The H200's error at `output`[index] over the bound there (printed), after checking that the
// inputs are the H200's (counter-based RNG) and that the bound holds.
double h200_over_bound(const Fixture& f, const char* output, const Seen& s) {
  const double gold = f.gold.at(output).data[s.index];
  EXPECT_NEAR(gold, s.fp64, 1e-15 * std::fabs(s.fp64)) << "the inputs are not the H200's";
  const double err = std::fabs(gold - s.h200), bound = f.b.elem.at(output).data[s.index];
  std::printf("%s[%zu]: H200 error %.4g, bound %.4g (%.3fx)\n", output, s.index, err, bound, err / bound);
  EXPECT_GE(bound, err) << output << "[" << s.index << "]";
  return err / bound;
}

Case h200_case(const std::string& fields) {
  return from_json(R"({"kind": "flce", "batch": 1, "out_variant": true, "input_dtype": "fp32", "weight_dtype": "fp32",
    "bias": false, "ignore_index": -100, "label_smoothing": 0.0, "return_z_loss": false, "use_token_scaling": false,
    "requires_grad": {"input": true, "weight": true, "bias": false}, "autocast": "none", "device": "cuda",
    "extra_BT": [], "semantics": "liger", )" + fields + "}");
}
}  // namespace

// Liger's softmax exp (Triton's ex2.approx.ftz) returns 0 for a probability under 2^-126, and the
// log-spread upstream gradient (up to ~3.8e3 here) scales that loss: grad_weight[759] came back
// 1.43e-35 where fp64 gives 2.34e-34, 90.9x the bound that counted the flush only unscaled.
TEST(Judge, AFlushedProbabilityScaledByItsUpstreamGradientIsWithinTheBound) {
  Fixture f(h200_case(R"("BT": 19, "H": 12, "V": 64, "accum_dtype": "none", "ce_weight": true,
    "ignore_fraction": 0.5, "lse_square_scale": 0.0, "softcap": null, "reduction": "none", "grad_output": 1.0,
    "token_grad": "log_spread", "return_token_accuracy": true, "return_predicted_tokens": true,
    "regime": "large_logits", "seed": 398807115)"));
  const double gold = f.gold.at("grad_weight").data[759], h200 = 1.4258492492930286e-35;
  ASSERT_NEAR(gold, 2.3395636382131775e-34, 1e-40) << "the inputs are not the H200's (counter-based RNG)";
  const double err = std::fabs(gold - h200), bound = f.b.elem.at("grad_weight").data[759];
  std::printf("grad_weight[759]: H200 error %.4g, bound %.4g (%.3fx)\n", err, bound, err / bound);
  EXPECT_GE(bound, err) << "the flushed probabilities' share is derived, not tuned";
  EXPECT_LT(bound, 4 * err) << "and it is no wider than the flush it covers";
  Outputs got = f.rounded();
  got["grad_weight"].data[759] = h200;
  EXPECT_TRUE(judge("eager", f.c, f.gold, f.b, got).pass());
}

// Liger recovers the target's tanh from its capped logit (c / softcap): tanhf's ulps and the
// division's put 1 - t^2 near saturation ~2u further off than the old 2u allowance.
TEST(Judge, SoftcapsChainRuleAllowsTanhsOwnUlpsAndTheRecoveryDivision) {
  const Seen seen[] = {
      {R"("BT": 3, "H": 31, "V": 26, "accum_dtype": "fp32", "ce_weight": false, "ignore_fraction": 0.5,
          "lse_square_scale": 0.0, "softcap": 3.0, "reduction": "mean", "grad_output": 0.5, "token_grad": "random",
          "return_token_accuracy": false, "return_predicted_tokens": false, "regime": "confident", "seed": 97192997)",
       273, 0.00020622474920722973, 0.00020609832426998764},
      {R"("BT": 6, "H": 5, "V": 64, "accum_dtype": "fp32", "ce_weight": true, "ignore_fraction": 0.5,
          "lse_square_scale": 0.0001, "softcap": 3.0, "reduction": "sum", "grad_output": 1.0, "token_grad": "random",
          "return_token_accuracy": false, "return_predicted_tokens": false, "regime": "large_logits", "seed": 243779897)",
       5, 0.0034117734449800098, 0.0034056436270475388},
  };
  for (const Seen& s : seen)
    EXPECT_LT(h200_over_bound(Fixture(h200_case(s.fields)), "grad_weight", s), 0.5)
        << "the H200's error, measured: 1.21x and 1.13x of the old bound";
  // Not vacuous: one bf16 ulp on every grad_weight element of the first case is still caught.
  Fixture f(h200_case(seen[0].fields));
  Outputs got = f.rounded();
  for (auto& v : got["grad_weight"].data) v *= 1.0 + std::ldexp(1.0, -8);
  EXPECT_FALSE(judge("eager", f.c, f.gold, f.b, got).pass());
}

// reduction='none': Liger folds the per-token upstream gradient into the logits gradient in
// bf16 (`grad_logits * g.to(grad_logits.dtype)`), two roundings the bound left out. An
// emulation of that order on these inputs gives the H200's values bit for bit (docs/benchmarks-history.md,
// fourth round): Liger 0.8.5 at 1.00x (seed 61) and main at 1.03x (seed 19) of the old bound.
TEST(Judge, AnUpstreamGradientFoldedInTheLogitsDtypeIsWithinTheBound) {
  const std::string common = R"("kind": "flce", "batch": 1, "out_variant": true, "input_dtype": "bf16",
    "weight_dtype": "bf16", "bias": false, "ce_weight": false, "ignore_index": -100, "lse_square_scale": 0.0,
    "softcap": null, "reduction": "none", "token_grad": "random", "return_z_loss": true,
    "return_token_accuracy": false, "return_predicted_tokens": false, "use_token_scaling": false,
    "requires_grad": {"input": true, "weight": true, "bias": false}, "autocast": "none", "device": "cuda",
    "extra_BT": [], "regime": "normal", "semantics": "liger", )";
  const Seen seen[] = {
      {R"("BT": 19, "H": 16, "V": 2, "accum_dtype": "none", "ignore_fraction": 0.0, "label_smoothing": 0.0,
          "grad_output": -2.0, "seed": 419887307)",
       204, 0.08503190981932252, 0.0859375},
      {R"("BT": 27, "H": 25, "V": 3, "accum_dtype": "fp32", "ignore_fraction": 0.5, "label_smoothing": 0.5,
          "grad_output": 1.0, "seed": 475723354)",
       449, 0.05007771458927329, 0.050537109375},
  };
  for (const Seen& s : seen) {
    Fixture f(from_json("{" + common + s.fields + "}"));
    EXPECT_LT(h200_over_bound(f, "grad_input", s), 0.75) << "the H200's error, measured: 1.00x and 1.03x of the old bound";
    // Not vacuous: grad_input off by 4 bf16 ulps everywhere is still out of bounds.
    Outputs got = f.rounded();
    for (auto& v : got["grad_input"].data) v *= 1.0 + 4 * std::ldexp(1.0, -8);
    EXPECT_FALSE(judge("eager", f.c, f.gold, f.b, got).pass()) << s.index;
  }
}

// torch's chunked path (acc_policy="accurate", acc_dtype None -> fp16) on CPU, torch 2.13: V = 1,
// so grad_weight is exactly 0, and torch returned -0.00537 at element 1 (bulk P^T X minus the
// target rows, each rounded in fp16). The fused bound of that run was 0.00522 (1.03x). The split
// form (MATH.md item 12) adds the accumulation and chunk rounding of both terms, |p| + |y| = 2
// here where |p - y| = 0: (gamma(20, u) + u) * 2 sum|x| * |grad_output|, exactly; it allows
// torch's value and not one past the bound.
TEST(Judge, ASplitWeightGradientAllowsItsTwoTermsRoundedApart) {
  Case c = from_json(R"({"schema_version":1,"kind":"flce","BT":20,"H":6,"V":1,"batch":1,"out_variant":true,
    "input_dtype":"fp16","weight_dtype":"fp16","accum_dtype":"none","bias":false,"ce_weight":false,
    "ignore_index":-100,"ignore_fraction":0.0,"label_smoothing":0.0,"lse_square_scale":0.0,"softcap":null,
    "reduction":"sum","grad_output":0.5,"token_grad":"ones","return_z_loss":false,"return_token_accuracy":false,
    "return_predicted_tokens":false,"use_token_scaling":false,
    "requires_grad":{"input":true,"weight":true,"bias":false},"autocast":"none","device":"cpu",
    "extra_BT":[],"regime":"normal","semantics":"torch","seed":246201355})");
  const double torch_got = -0.00537109375;
  Fixture fused(c);
  ASSERT_EQ(fused.gold.at("grad_weight").data[1], 0.0);
  c.grad_weight_split = true;
  EXPECT_NE(to_json(c).find("\"grad_weight_split\": true"), std::string::npos);
  Fixture split(c);
  double sum_x = 0;
  for (int64_t i = 0; i < c.BT; ++i) sum_x += std::fabs(split.in.x[static_cast<size_t>(i * c.H + 1)]);
  const double u = std::ldexp(1.0, -11), gamma = 6 * std::sqrt(20.0) * u;
  const double fb = fused.b.elem.at("grad_weight").data[1], sb = split.b.elem.at("grad_weight").data[1];
  EXPECT_NEAR(sb - fb, (gamma + u) * 2 * sum_x * 0.5, 1e-9 * sb);
  Outputs got = split.rounded();
  got["grad_weight"].data[1] = torch_got;
  EXPECT_TRUE(judge("eager", split.c, split.gold, split.b, got).pass());
  got["grad_weight"].data[1] = -1.05 * sb;
  EXPECT_FALSE(judge("eager", split.c, split.gold, split.b, got).pass());
}

// torch's reference path on CPU (torch 2.13, bf16): log_softmax keeps the sum of exponentials in
// bf16 before its log (MATH.md item 11). Token 1 of this case: logits (-2.390625, -0.0810546875),
// target 1; the sum 1.0993 stored as 1.1015625 gives the loss torch returned, 0.0966796875
// (fp64: 0.09412). The bound allows it, and not an error four times as large.
TEST(Judge, TorchsCpuLogSoftmaxSumInTheLossDtypeIsWithinTheBound) {
  Case c = from_json(R"({"schema_version":1,"kind":"flce","BT":5,"H":13,"V":2,"batch":1,"out_variant":true,
    "input_dtype":"bf16","weight_dtype":"bf16","accum_dtype":"none","bias":false,"ce_weight":false,
    "ignore_index":-100,"ignore_fraction":0.1,"label_smoothing":0.0,"lse_square_scale":0.0,"softcap":null,
    "reduction":"none","grad_output":-2.0,"token_grad":"ones","return_z_loss":false,"return_token_accuracy":false,
    "return_predicted_tokens":false,"use_token_scaling":false,
    "requires_grad":{"input":true,"weight":true,"bias":false},"autocast":"none","device":"cpu",
    "extra_BT":[],"regime":"normal","semantics":"torch","seed":265411717})");
  Fixture f(c);
  const double golden = f.gold.at("loss").data[1], torch_got = 0.0966796875;
  ASSERT_NEAR(golden, 0.09412195689776703, 1e-12);
  Outputs got = f.rounded();
  got["loss"].data[1] = torch_got;
  EXPECT_TRUE(judge("eager", f.c, f.gold, f.b, got).pass()) << "bound " << f.b.elem.at("loss").data[1];
  got["loss"].data[1] = golden + 4 * (torch_got - golden);
  EXPECT_FALSE(judge("eager", f.c, f.gold, f.b, got).pass());
}

// MATH.md item 13: a softmax in the logits dtype widens the softmax's error only where the
// contract puts it there: "acc" is the logits dtype with accum_dtype none, fp32 with fp32.
TEST(Judge, ASoftmaxInTheAccumulationDtypeWidensOnlyWhereItIsLowPrecision) {
  Case c = example_case();
  c.BT = 19, c.H = 32, c.V = 2;
  c.input_dtype = c.weight_dtype = DType::BF16;
  c.semantics = Semantics::TORCH, c.device = Device::CPU;
  c.accum_dtype.reset();
  auto bound = [](const Case& k) { return Fixture(k).b.elem.at("grad_input").data; };
  const auto plain = bound(c);
  Case acc = c;
  acc.softmax_dtype = "acc";
  EXPECT_NE(to_json(acc).find("\"softmax_dtype\": \"acc\""), std::string::npos);
  EXPECT_EQ(from_json(to_json(acc)).softmax_dtype, "acc");
  const auto wide = bound(acc);
  for (size_t k = 0; k < plain.size(); ++k) EXPECT_GT(wide[k], plain[k]) << k;
  c.accum_dtype = acc.accum_dtype = DType::F32;
  EXPECT_EQ(bound(acc), bound(c)) << "fp32 accumulation: the softmax is fp32";
  Case bad = c;
  bad.softmax_dtype = "bf16";
  EXPECT_THROW(validate(bad), CaseError);
}
