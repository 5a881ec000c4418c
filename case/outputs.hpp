// Outputs: what any oracle (golden, CUDA reference, a subject) produced for a case,
// as named tensors with the dtype the oracle produced them in and values widened to
// double. Names: loss, z_loss, token_accuracy, predicted_tokens, grad_input,
// grad_weight, grad_bias (flce) or out (op kinds).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "case/dtype.hpp"

namespace flce {

struct Tensor64 {
  std::vector<int64_t> shape;  // {} for a scalar
  DType dtype = DType::F64;    // dtype the producer returned (golden: the dtype it *should* be)
  std::vector<double> data;
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
};

// Ordered by name so printing and JSON are stable.
using Outputs = std::map<std::string, Tensor64>;

inline const char* const kOutputNames[] = {"loss", "z_loss", "token_accuracy", "predicted_tokens",
                                            "grad_input", "grad_weight", "grad_bias", "out"};

}  // namespace flce
