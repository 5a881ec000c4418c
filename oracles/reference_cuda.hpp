// The CUDA reference (kernels/) as an oracle: the same case, inputs generated on the GPU
// bit-identical to make_inputs, computed under the dtype contract a correct GPU
// implementation follows. Judged next to the subject, it tells whether an out-of-bounds
// error is the subject's or one every such implementation makes.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "case/case.hpp"
#include "case/outputs.hpp"

namespace flce {

// Built with CUDA (FLCE_CUDA) and a device present.
bool reference_cuda_available();
// nullopt where it cannot run here. Contract knobs, both off for the precise reference:
struct ReferenceContract {
  // Round the logits to the GEMM operand dtype and add the bias in it, as an implementation
  // that materializes bf16/fp16 logits does (Liger).
  bool narrow_logits = false;
  // Softcap chain rule as 1 - tanh^2 from fp32 tanhf (autograd's and Liger's form).
  bool tanh_chain = false;
};
std::optional<Outputs> reference_cuda(const Case& c, ReferenceContract contract = {});

// The reference oracles for a case, by name: "reference-cuda" (fp32 logits, sech^2) and,
// where the case makes them differ, "reference-cuda:subject-contract" (narrow logits for
// bf16/fp16 GEMM operands, 1 - tanh^2 with softcap): the same-contract comparison a
// three-way verdict wants. Empty without a device.
using ReferenceOracle = std::pair<std::string, std::function<std::optional<Outputs>(const Case&)>>;
std::vector<ReferenceOracle> reference_cuda_oracles(const Case& c);

}  // namespace flce
