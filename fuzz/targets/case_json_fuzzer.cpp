// Structure-aware fuzzer of the case model: bytes are a case's JSON; the custom
// mutator edits one field of a decoded case (keeping it valid), so libFuzzer explores
// cases rather than broken JSON. Invariants: any accepted text round-trips exactly,
// and the golden reference on it is finite-or-explained and deterministic.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "fuzz/targets/case_mutator.hpp"
#include "fuzz/targets/features.hpp"
#include "judge/bounds.hpp"
#include "case/case.hpp"
#include "oracles/golden.hpp"

using namespace flce;

namespace {

[[noreturn]] void die(const char* what, const std::string& text) {
  std::fprintf(stderr, "case_json_fuzzer: %s\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return fuzz::mutate_bytes(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  Case c;
  try {
    c = from_json(text);
  } catch (const CaseError&) {
    return -1;  // rejected early: not added to the corpus
  }
  std::string canon = to_json(c);
  Case back;
  try {
    back = from_json(canon);
  } catch (const CaseError& e) {
    die("canonical form rejected", canon + "\n" + e.what());
  }
  if (!(back == c) || to_json(back) != canon) die("round trip changed the case", canon);
  using fuzz::feature;
  feature("dtypes", std::string(dtype_name(c.input_dtype)) + "/" + std::string(dtype_name(c.weight_dtype)) + "/" +
                        (c.accum_dtype ? "fp32" : "none"));
  feature("reduction", name(c.reduction));
  feature("regime", name(c.regime));
  feature("flags", (c.bias) | (c.ce_weight << 1) | ((c.label_smoothing > 0) << 2) | ((c.lse_square_scale > 0) << 3) |
                       (c.softcap.has_value() << 4) | (c.use_token_scaling << 5) | (c.return_z_loss << 6));
  feature("ignored", static_cast<int64_t>(c.ignore_fraction * 4));
  if (c.BT * c.H * c.V > 4096 || c.is_op()) return 0;
  Inputs in = make_inputs(c);
  Outputs a = golden(c, in), b = golden(c, in);
  Bounds bd = compute_bounds(c, in);
  feature("ambiguous_tokens", bd.ambiguous_tokens > 0);
  for (auto& [n, t] : a) {
    bool finite = true;
    for (double v : t.data) finite = finite && std::isfinite(v);
    feature("finite:" + n, finite);
  }
  for (auto& [n, t] : a)
    for (size_t k = 0; k < t.data.size(); ++k) {
      double x = t.data[k], y = b.at(n).data[k];
      if (!(x == y || (std::isnan(x) && std::isnan(y)))) die("golden not deterministic", canon);
      // Without special values in the inputs, the golden must be finite (all-ignored
      // accuracy is the one documented NaN: 0 correct of 0 tokens; torch semantics' 0/0 loss too).
      if (c.regime != Regime::SPECIAL_VALUES && c.regime != Regime::LARGE_LOGITS && !std::isfinite(x) &&
          !(n == "token_accuracy" || (n == "loss" && nan_if_all_ignored(c))))
        die(("non-finite golden output " + n).c_str(), canon);
    }
  return 0;
}
