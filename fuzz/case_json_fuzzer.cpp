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

#include "fuzz/features.hpp"
#include "oracles/bounds.hpp"
#include "oracles/case.hpp"
#include "oracles/golden.hpp"

using namespace flce;

namespace {

[[noreturn]] void die(const char* what, const std::string& text) {
  std::fprintf(stderr, "case_json_fuzzer: %s\n%s\n", what, text.c_str());
  std::abort();
}

// Mutate one field of a valid case; shapes stay small so each run is fast.
void mutate(Case& c, std::mt19937_64& rng) {
  auto coin = [&] { return (rng() & 1) != 0; };
  auto small = [&](int64_t hi) { return static_cast<int64_t>(1 + rng() % static_cast<uint64_t>(hi)); };
  switch (rng() % 16) {
    case 0: c.BT = small(12); break;
    case 1: c.H = small(12); break;
    case 2: c.V = small(20); break;
    case 3: c.input_dtype = static_cast<DType>(rng() % 3); c.weight_dtype = coin() ? c.input_dtype : static_cast<DType>(rng() % 3); break;
    case 4: c.accum_dtype = coin() ? std::optional<DType>(DType::F32) : std::nullopt; break;
    case 5: c.bias = coin(); c.requires_grad.bias = c.bias && coin(); break;
    case 6: c.ce_weight = coin(); break;
    case 7: c.ignore_fraction = static_cast<double>(rng() % 5) / 4.0; break;
    case 8: c.label_smoothing = static_cast<double>(rng() % 5) / 4.0; break;
    case 9: c.lse_square_scale = coin() ? 0.0 : 1e-3; break;
    case 10: c.softcap = coin() ? std::nullopt : std::optional<double>(static_cast<double>(1 + rng() % 50)); break;
    case 11: c.reduction = static_cast<Reduction>(rng() % 3); break;
    case 12: c.return_z_loss = coin(); c.return_token_accuracy = coin(); c.return_predicted_tokens = coin(); break;
    case 13: c.use_token_scaling = coin(); break;
    case 14: c.regime = static_cast<Regime>(rng() % 4); break;
    default: c.seed = rng() % 100000; break;
  }
  if (c.is_op()) c = Case{};  // keep op kinds out of this target: golden FLCE focus
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  Case c;
  try {
    c = from_json(std::string(reinterpret_cast<char*>(data), size));
  } catch (const CaseError&) {
    c = example_case();
  }
  int n = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) mutate(c, rng);
  if (!validation_errors(c).empty()) c = example_case();
  std::string out = to_json(c, -1);
  if (out.size() > max_size) return size;
  std::memcpy(data, out.data(), out.size());
  return out.size();
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
          !(n == "token_accuracy" || (n == "loss" && c.semantics == Semantics::TORCH)))
        die(("non-finite golden output " + n).c_str(), canon);
    }
  return 0;
}
