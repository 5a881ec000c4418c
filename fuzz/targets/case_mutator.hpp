// Structure-aware mutation shared by flce's fuzzers: decode the bytes as a case, edit
// one to three fields (keeping the case valid and small), encode canonically.
#pragma once
#include <cstring>
#include <random>
#include <string>

#include "case/case.hpp"

namespace flce::fuzz {

// Mutate one field of a valid case; shapes stay small so each run is fast.
inline void mutate(Case& c, std::mt19937_64& rng) {
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


// libFuzzer custom-mutator body: invalid input restarts from the example case.
inline size_t mutate_bytes(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
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

}  // namespace flce::fuzz
