// Host-side input tensors for a Case, generated from its seed (see gen.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "case/case.hpp"
#include "case/gen.hpp"

namespace flce {

GenSpec make_gen_spec(const Case& c, int64_t BT_override = 0);

// Values are fp32 holding exactly-representable values of their storage dtype.
struct Inputs {
  int64_t BT = 0, H = 0, V = 0, batch = 1;
  std::vector<float> x;           // [BT, H]   (op kinds: B = [batch*BT, H])
  std::vector<float> w;           // [V, H]    (flce)
  std::vector<float> bias;        // [V]       (if case.bias)
  std::vector<float> ce_weight;   // [V]       (if case.ce_weight)
  std::vector<int64_t> target;    // [BT]
  std::vector<float> token_grad;  // [BT]      (reduction none)
  std::vector<float> op_a;        // [batch, V, BT] (op kinds)
  std::vector<float> op_c;        // [batch, V, H]  (addmm/baddbmm)
  int64_t n_ignored() const;
};

Inputs make_inputs(const Case& c, int64_t BT_override = 0);

}  // namespace flce
