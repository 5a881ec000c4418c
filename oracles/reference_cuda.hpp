// The CUDA reference (kernels/) as an oracle: the same case, inputs generated on the GPU
// bit-identical to make_inputs, computed under the dtype contract a correct GPU
// implementation follows. Judged next to the subject, it tells whether an out-of-bounds
// error is the subject's or one every such implementation makes.
#pragma once
#include <optional>

#include "case/case.hpp"
#include "case/outputs.hpp"

namespace flce {

// Built with CUDA (FLCE_CUDA) and a device present.
bool reference_cuda_available();
// nullopt where it cannot run here.
std::optional<Outputs> reference_cuda(const Case& c);

}  // namespace flce
