#include "oracles/reference_cuda.hpp"

#ifdef FLCE_HAVE_CUDA
#include "kernels/device_inputs.hpp"
#include "kernels/device_query.hpp"
#include "kernels/host_transfer.hpp"
#include "kernels/reference_flce.hpp"
#include "kernels/reference_op.hpp"
#endif

namespace flce {

#ifdef FLCE_HAVE_CUDA
bool reference_cuda_available() { return has_cuda_device(); }

std::optional<Outputs> reference_cuda(const Case& c) {
  if (!has_cuda_device()) return std::nullopt;
  DeviceInputs in = make_device_inputs(c, nullptr);
  ReferenceResult r = c.is_op() ? reference_op_cuda(c, in, nullptr) : reference_flce_cuda(c, in, nullptr);
  return to_host(r, nullptr);
}
#else
bool reference_cuda_available() { return false; }
std::optional<Outputs> reference_cuda(const Case&) { return std::nullopt; }
#endif

}  // namespace flce
