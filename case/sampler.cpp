#include "case/sampler.hpp"

#include <array>
#include <iterator>
#include <random>

namespace flce {

namespace {

Case sample_one(uint64_t seed, uint64_t index, const SampleSpace& sp);

// One draw in [0, 100) -> a value regime (issue #16: one_class, and weight_spread with ce_weight).
Regime draw_regime(uint64_t d, bool ce_weight) {
  if (d < 40) return Regime::NORMAL;
  if (d < 65) return Regime::CONFIDENT;
  if (d < 80) return Regime::LARGE_LOGITS;
  if (d < 90 || !ce_weight) return Regime::ONE_CLASS;
  return Regime::WEIGHT_SPREAD;
}
TokenGrad draw_token_grad(uint64_t d) {
  return d < 20 ? TokenGrad::ONES : d < 70 ? TokenGrad::RANDOM : TokenGrad::LOG_SPREAD;
}

// Family member `member` of the family whose configuration is `cfg`. A family compiles once:
// its members share the configuration's shape, so no member pays an automatic-dynamic recompile
// (a second shape to one compiled function recompiles it with symbolic sizes: 74 s on a loaded
// box, and pytorch#181735 on every Liger tree). Only a family compiled with dynamic=True, which
// one compile serves for any shape, draws from a pool of shapes. Second shapes are found on
// purpose in the sequence families (sampler.hpp, is_sequence_family).
Case family_member(Case cfg, uint64_t seed, uint64_t family, uint64_t member, const SampleSpace& sp) {
  // The pool depends on the family only; the pick and the data on the member.
  std::mt19937_64 pool_rng(seed * 0xD1B54A32D192ED03ull + family * 0x9E3779B97F4A7C15ull + 1);
  std::array<std::array<int64_t, 3>, kShapePool> pool{};
  const int64_t hi[3] = {cfg.BT, cfg.H, cfg.V};  // the sampled config's shape bounds the pool
  for (auto& shape : pool)
    for (int d = 0; d < 3; ++d) shape[d] = 1 + static_cast<int64_t>(pool_rng() % static_cast<uint64_t>(hi[d]));
  pool[0] = {cfg.BT, cfg.H, cfg.V};
  const bool one_compile_any_shape = cfg.compile.dynamic == true && cfg.extra_BT.empty();
  std::mt19937_64 rng(seed * 0xBF58476D1CE4E5B9ull + family * 0x94D049BB133111EBull + member);
  auto u = [&](uint64_t n) { return rng() % n; };
  Case c = cfg;
  c.seed = rng() % 1000000007ull;
  const uint64_t pick = u(kShapePool);
  const auto& shape = pool[one_compile_any_shape ? pick : 0];
  c.BT = shape[0];
  c.H = shape[1];
  c.V = shape[2];
  if (sp.eager_groups) {  // no compile to keep: BT and H free, V (what kernels specialize on) fixed
    c.BT = 1 + static_cast<int64_t>(u(static_cast<uint64_t>(sp.max_BT)));
    c.H = 1 + static_cast<int64_t>(u(static_cast<uint64_t>(sp.max_H)));
  }
  if (c.is_op()) return c;
  const double fr[] = {0.0, 0.0, 0.1, 0.5, 1.0};
  c.ignore_fraction = fr[u(5)];
  if (c.regime != Regime::SPECIAL_VALUES) {  // special values stay where the config chose them
    c.regime = draw_regime(u(100), c.ce_weight);
  }
  c.grad_output = u(5) == 0 ? (u(2) ? 0.5 : -2.0) : 1.0;
  c.token_grad = draw_token_grad(u(100));
  return c;
}

Case plain_config(uint64_t family, Device device) {
  Case c;  // every flag at its default
  const DType dts[] = {DType::BF16, DType::F16, DType::F32};
  c.input_dtype = c.weight_dtype = dts[family / 2];
  if (family % 2) c.accum_dtype = DType::F32;
  c.device = device;
  c.BT = 16;
  c.H = 32;
  c.V = 64;
  return c;
}

}  // namespace

// fp16 tops out at 65504: upstream gradients and class weights spread over orders of
// magnitude push a correct fp16 implementation's gradient logits or GEMM partial sums past it
// even where the fp64 result fits (seen on `model`: grad_input inf where fp64 gives 39012),
// which is the format's range, not a rounding the bound could hold. Spreads stay off fp16.
bool is_sequence_family(uint64_t family) { return family >= 6 && family % kSequenceShare == kSequenceShare - 1; }

Case within_fp16_range(Case c) {
  const bool fp16 = c.input_dtype == DType::F16 || c.weight_dtype == DType::F16 || c.autocast == Autocast::F16;
  if (!fp16) return c;
  if (c.token_grad == TokenGrad::LOG_SPREAD) c.token_grad = TokenGrad::RANDOM;
  if (c.regime == Regime::WEIGHT_SPREAD) c.regime = Regime::NORMAL;
  // Under torch's semantics the contract is cross_entropy on fp16 logits: with label smoothing
  // its per-class term sum_j (lse - c_j) is an fp16 tensor, and large_logits (logits ~ 64 * H)
  // overflow it where the fp64 loss is small (torch-native: loss inf against 72.2, CPU, seed 1).
  // That is the contract's own range, not a defect: such cases are not drawn there. `confident`
  // (margins up to ~20 nats on every class) overflows it too once the CPU nll_loss sums the
  // tokens' smoothing terms in fp16 (MATH.md item 11): BT 28, V 64 gave loss inf where fp64 gives
  // 27.7 (torch-native, seed 61), the reference path's sum being ~1e5 > 65504.
  if (c.semantics == Semantics::TORCH && c.label_smoothing > 0 &&
      (c.regime == Regime::LARGE_LOGITS || c.regime == Regime::CONFIDENT))
    c.regime = Regime::NORMAL;
  return c;
}

Case under_contract(Case c, const SampleSpace& sp) {
  if (sp.semantics && !c.is_op()) c.semantics = *sp.semantics;
  if (!sp.dtypes.empty() && !sp.dtypes.count(c.input_dtype)) {
    const DType d = *std::next(sp.dtypes.begin(), static_cast<long>(c.seed % sp.dtypes.size()));
    if (c.weight_dtype == c.input_dtype) c.weight_dtype = d;
    c.input_dtype = d;
  }
  if (!c.is_op()) {
    auto f = sp.grad_filter_eps.find(c.input_dtype);
    const bool here = sp.grad_filter_devices.empty() || sp.grad_filter_devices.count(c.device);
    c.grad_filter_eps = f == sp.grad_filter_eps.end() || !here ? 0.0 : f->second;
    c.grad_weight_split = sp.grad_weight_split;
    c.softmax_dtype = sp.softmax_dtype;
  }
  return c;
}

Case sample_case(uint64_t seed, uint64_t index, const SampleSpace& sp) {
  // Parameters the subject lacks are drawn and then dropped: every other field of case k is
  // the one a subject with all parameters gets.
  if (sp.family_size <= 1) {
    Case c = sample_one(seed, index, sp);
    drop_parameters(c, sp.without);
    return within_fp16_range(under_contract(c, sp));
  }
  const uint64_t family = index / sp.family_size, member = index % sp.family_size;
  Case cfg = family < 6 && !sp.dtype ? plain_config(family, sp.device)
                                                       : sample_one(seed ^ 0x5851F42D4C957F2Dull, family, sp);
  drop_parameters(cfg, sp.without);
  cfg = under_contract(cfg, sp);  // on the configuration: a family keeps one dtype
  if (is_sequence_family(family) && !cfg.is_op() && !sp.eager_groups) {
    // Every member first feeds the compiled function another BT: its second shape, on purpose.
    std::mt19937_64 rng(seed * 0x2545F4914F6CDD1Dull + family);
    int64_t bt2 = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(sp.max_BT));
    if (bt2 == cfg.BT) bt2 = cfg.BT % sp.max_BT + 1;
    if (bt2 != cfg.BT) cfg.extra_BT = {bt2};
  }
  return within_fp16_range(family_member(cfg, seed, family, member, sp));
}

const std::vector<std::string>& flce_parameters() {
  static const std::vector<std::string> v = {"bias", "ce_weight", "ignore_index", "lse_square_scale",
                                             "label_smoothing", "reduction", "softcap", "return_z_loss",
                                             "accum_dtype", "use_token_scaling", "return_token_accuracy",
                                             "return_predicted_tokens"};
  return v;
}

std::vector<std::string> parameters_used(const Case& c) {
  std::vector<std::string> v;
  if (c.is_op()) return v;
  const bool used[] = {c.bias, c.ce_weight, c.ignore_index != -100, c.lse_square_scale != 0,
                       c.label_smoothing != 0, c.reduction != Reduction::MEAN, c.softcap.has_value(),
                       c.return_z_loss, c.accum_dtype.has_value(), c.use_token_scaling, c.return_token_accuracy,
                       c.return_predicted_tokens};
  for (size_t i = 0; i < flce_parameters().size(); ++i)
    if (used[i]) v.push_back(flce_parameters()[i]);
  return v;
}

void drop_parameters(Case& c, const std::set<std::string>& params) {
  if (c.is_op()) return;
  for (const auto& p : params) {
    if (p == "bias") {
      c.bias = false;
      c.requires_grad.bias = false;
    } else if (p == "ce_weight") {
      c.ce_weight = false;
      if (c.regime == Regime::WEIGHT_SPREAD) c.regime = Regime::NORMAL;  // nothing left to spread
    }
    else if (p == "ignore_index") c.ignore_index = -100;
    else if (p == "lse_square_scale") c.lse_square_scale = 0;
    else if (p == "label_smoothing") c.label_smoothing = 0;
    else if (p == "reduction") c.reduction = Reduction::MEAN;
    else if (p == "softcap") c.softcap.reset();
    else if (p == "return_z_loss") c.return_z_loss = false;
    else if (p == "accum_dtype") c.accum_dtype.reset();
    else if (p == "use_token_scaling") c.use_token_scaling = false;
    else if (p == "return_token_accuracy") c.return_token_accuracy = false;
    else if (p == "return_predicted_tokens") c.return_predicted_tokens = false;
  }
}

std::string graph_key(const Case& in) {
  Case c = in;
  c.seed = 0;
  c.BT = c.H = c.V = 1;
  c.ignore_fraction = 0;
  if (c.regime != Regime::SPECIAL_VALUES) c.regime = Regime::NORMAL;  // one_class, weight_spread: values too
  c.grad_output = 1.0;
  c.token_grad = TokenGrad::RANDOM;
  return to_json(c, -1);
}

namespace {

Case sample_one(uint64_t seed, uint64_t index, const SampleSpace& sp) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + index);
  auto u = [&](uint64_t n) { return rng() % n; };
  auto coin = [&](int pct) { return static_cast<int>(u(100)) < pct; };
  auto dim = [&](int64_t hi) {
    // favour small and odd sizes, sometimes the edge of the range
    switch (u(4)) {
      case 0: return static_cast<int64_t>(1 + u(4));
      case 1: return hi;
      default: return static_cast<int64_t>(1 + u(static_cast<uint64_t>(hi)));
    }
  };
  Case c;
  c.seed = rng() % 1000000007ull;
  c.device = sp.device;
  c.BT = dim(sp.max_BT);
  c.H = dim(sp.max_H);
  c.V = dim(sp.max_V);
  const DType dts[] = {DType::BF16, DType::F16, DType::F32};
  c.input_dtype = sp.dtype.value_or(dts[u(3)]);
  // torch's matmul needs one dtype: mixed input/weight dtypes are a valid FLCE call only
  // under autocast, which the sampler sets up below with fp32 parameters.
  c.weight_dtype = c.input_dtype;
  if (coin(50)) c.accum_dtype = DType::F32;
  if (sp.op_kinds && coin(20)) {
    const Kind ks[] = {Kind::ADDMM, Kind::MM, Kind::BMM, Kind::BADDBMM};
    Case o;
    o.kind = ks[u(4)];
    o.seed = c.seed;
    o.device = c.device;
    o.BT = c.BT; o.H = c.H; o.V = c.V;
    o.input_dtype = o.weight_dtype = c.input_dtype;
    o.accum_dtype = c.accum_dtype;
    o.out_variant = coin(70);
    o.batch = o.batched() ? static_cast<int64_t>(1 + u(3)) : 1;
    o.requires_grad = {false, false, false};
    return o;
  }
  c.bias = coin(30);
  c.ce_weight = coin(30);
  const double fr[] = {0.0, 0.0, 0.1, 0.5, 1.0};
  c.ignore_fraction = fr[u(5)];
  if (coin(30)) c.label_smoothing = coin(50) ? 0.1 : 0.5;
  if (coin(25)) c.lse_square_scale = coin(50) ? 1e-4 : 0.05;
  if (coin(25)) c.softcap = coin(50) ? 30.0 : 3.0;
  c.reduction = static_cast<Reduction>(u(3));
  if (coin(20)) c.grad_output = coin(50) ? 0.5 : -2.0;
  c.token_grad = draw_token_grad(u(100));
  c.return_z_loss = coin(30);
  c.return_token_accuracy = coin(30);
  c.return_predicted_tokens = coin(30);
  c.use_token_scaling = coin(15);
  c.requires_grad.input = coin(90);
  c.requires_grad.weight = coin(90);
  c.requires_grad.bias = c.bias && coin(90);
  if (!sp.dtype && coin(10) && c.input_dtype == DType::F32 && c.weight_dtype == DType::F32 && !c.bias)
    c.autocast = coin(50) ? Autocast::BF16 : Autocast::F16;
  const uint64_t rd = u(100);
  c.regime = sp.special_values && rd < 20 ? Regime::SPECIAL_VALUES : draw_regime(rd, c.ce_weight);
  if (sp.compile_options) {
    if (coin(30)) c.compile.dynamic = coin(50);
    c.compile.fullgraph = coin(20);
  }
  return c;
}

}  // namespace

}  // namespace flce
