// RapidCheck generators for Case. Each field is drawn by a generator that carries its
// own shrinking, and every choice list starts with the default, so a failing case
// shrinks toward small shapes and default flags.
#pragma once
#include <rapidcheck.h>

#include "case/case.hpp"

namespace flce {
// RapidCheck prints counterexamples through showValue (found by ADL): the canonical JSON,
// which `flce` commands take directly.
inline void showValue(const Case& c, std::ostream& os) { os << to_json(c, -1); }
inline void showValue(Regime r, std::ostream& os) { os << name(r); }
}  // namespace flce

namespace flce::gen {

struct Limits {
  int64_t max_BT = 24, max_H = 24, max_V = 40;
  bool allow_special_values = true;
  bool allow_autocast = true;
  bool allow_op_kinds = false;
  bool flce_only_fp32 = false;  // fp32 everywhere (finite-difference properties)
};

// std::optional<T> that shrinks toward "absent" (the default).
template <class T>
rc::Gen<std::optional<T>> optional(rc::Gen<T> g) {
  return rc::gen::oneOf(rc::gen::just(std::optional<T>{}), rc::gen::map(std::move(g), [](T v) { return std::optional<T>(v); }));
}

template <class T>
rc::Gen<T> pick(std::initializer_list<T> values) {
  return rc::gen::elementOf(std::vector<T>(values));
}

inline rc::Gen<DType> float_dtype() { return pick({DType::BF16, DType::F32, DType::F16}); }

inline rc::Gen<Case> any_case(Limits lim = {}) {
  return rc::gen::exec([lim] {
    Case c;
    c.BT = *rc::gen::inRange<int64_t>(1, lim.max_BT + 1);
    c.H = *rc::gen::inRange<int64_t>(1, lim.max_H + 1);
    c.V = *rc::gen::inRange<int64_t>(1, lim.max_V + 1);
    if (lim.flce_only_fp32) {
      c.input_dtype = c.weight_dtype = DType::F32;
    } else {
      c.input_dtype = *float_dtype();
      // mixed input/weight dtypes are rare in practice; keep them but not common
      c.weight_dtype = *rc::gen::weightedOneOf<DType>({{9, rc::gen::just(c.input_dtype)}, {1, float_dtype()}});
    }
    c.accum_dtype = *optional(rc::gen::just(DType::F32));
    c.bias = *rc::gen::arbitrary<bool>();
    c.ce_weight = *rc::gen::arbitrary<bool>();
    c.ignore_fraction = *pick({0.0, 0.25, 0.5, 1.0, 0.1});
    c.label_smoothing = *pick({0.0, 0.1, 0.5, 1.0});
    c.lse_square_scale = *pick({0.0, 1e-4, 0.1});
    c.softcap = *optional(pick({30.0, 2.0, 1e4}));
    c.reduction = *pick({Reduction::MEAN, Reduction::SUM, Reduction::NONE});
    c.grad_output = *pick({1.0, 0.5, -2.0});
    c.token_grad = *pick({TokenGrad::RANDOM, TokenGrad::ONES, TokenGrad::LOG_SPREAD});
    c.return_z_loss = *rc::gen::arbitrary<bool>();
    c.return_token_accuracy = *rc::gen::arbitrary<bool>();
    c.return_predicted_tokens = *rc::gen::arbitrary<bool>();
    c.use_token_scaling = *rc::gen::arbitrary<bool>();
    c.requires_grad.input = !*rc::gen::arbitrary<bool>();
    c.requires_grad.weight = !*rc::gen::arbitrary<bool>();
    c.requires_grad.bias = c.bias && !*rc::gen::arbitrary<bool>();
    if (lim.allow_autocast) c.autocast = *pick({Autocast::NONE, Autocast::BF16, Autocast::F16});
    c.regime = lim.allow_special_values
                   ? *pick({Regime::NORMAL, Regime::CONFIDENT, Regime::LARGE_LOGITS, Regime::SPECIAL_VALUES})
                   : *pick({Regime::NORMAL, Regime::CONFIDENT, Regime::LARGE_LOGITS});
    if (c.regime == Regime::NORMAL)  // issue #16's regimes, in the normal regime's share
      c.regime = *pick({Regime::NORMAL, Regime::ONE_CLASS, c.ce_weight ? Regime::WEIGHT_SPREAD : Regime::NORMAL});
    c.compile.backend = *pick({Backend::INDUCTOR, Backend::AOT_EAGER, Backend::EAGER, Backend::AOT_EAGER_DECOMP_PARTITION});
    c.compile.fullgraph = *rc::gen::arbitrary<bool>();
    c.compile.dynamic = *optional(rc::gen::arbitrary<bool>());
    c.compile.capture_scalar_outputs = !*rc::gen::arbitrary<bool>();
    c.semantics = *pick({Semantics::LIGER, Semantics::TORCH, Semantics::TORCH_FP32});
    c.seed = *rc::gen::inRange<uint64_t>(0, 1000000);
    if (lim.allow_op_kinds) {
      Kind k = *pick({Kind::FLCE, Kind::ADDMM, Kind::MM, Kind::BMM, Kind::BADDBMM});
      if (k != Kind::FLCE) {
        Case o;
        o.kind = k;
        o.BT = c.BT; o.H = c.H; o.V = c.V;
        o.input_dtype = o.weight_dtype = c.input_dtype;
        o.accum_dtype = c.accum_dtype;
        o.out_variant = *rc::gen::arbitrary<bool>();
        o.batch = o.batched() ? *rc::gen::inRange<int64_t>(1, 4) : 1;
        o.seed = c.seed;
        o.compile = c.compile;
        return o;
      }
    }
    return c;
  });
}

}  // namespace flce::gen
