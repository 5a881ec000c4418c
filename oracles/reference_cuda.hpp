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
// nullopt where it cannot run here. logits_in_operand_dtype: round the logits to the GEMM
// operand dtype and add the bias in it, as an implementation that materializes bf16/fp16
// logits does (Liger); otherwise fp32 logits (the precise reference).
std::optional<Outputs> reference_cuda(const Case& c, bool logits_in_operand_dtype = false);

// The reference oracles for a case, by name: "reference-cuda" (fp32 logits) and, when the
// case's GEMM operands are bf16/fp16, "reference-cuda:narrow-logits" (the subject's logits
// contract: the same-contract comparison a three-way verdict wants). Empty without a device.
using ReferenceOracle = std::pair<std::string, std::function<std::optional<Outputs>(const Case&)>>;
std::vector<ReferenceOracle> reference_cuda_oracles(const Case& c);

}  // namespace flce
