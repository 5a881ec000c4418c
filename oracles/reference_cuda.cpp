#include "oracles/reference_cuda.hpp"

#ifdef FLCE_HAVE_CUDA
#include "kernels/device_inputs.hpp"
#include "kernels/device_query.hpp"
#include "kernels/host_transfer.hpp"
#include "kernels/reference_flce.hpp"
#include "kernels/reference_op.hpp"
#include "kernels/reference_plan.hpp"
#endif

namespace flce {

#ifdef FLCE_HAVE_CUDA
bool reference_cuda_available() { return has_cuda_device(); }

std::optional<Outputs> reference_cuda(const Case& c, ReferenceContract contract) {
  if (!has_cuda_device()) return std::nullopt;
  DeviceInputs in = make_device_inputs(c, nullptr);
  ReferenceOptions opt;
  opt.logits_in_operand_dtype = contract.narrow_logits;
  opt.tanh_chain = contract.tanh_chain;
  ReferenceResult r = c.is_op() ? reference_op_cuda(c, in, nullptr) : reference_flce_cuda(c, in, nullptr, opt);
  return to_host(r, nullptr);
}

std::vector<ReferenceOracle> reference_cuda_oracles(const Case& c) {
  std::vector<ReferenceOracle> v;
  if (c.device != Device::CUDA || !reference_cuda_available()) return v;
  v.push_back({"reference-cuda", [](const Case& k) { return reference_cuda(k); }});
  const ReferenceContract sc{!c.is_op() && gemm_operand_dtype(c) != DType::F32, !c.is_op() && c.softcap.has_value()};
  if (sc.narrow_logits || sc.tanh_chain)
    v.push_back({"reference-cuda:subject-contract", [sc](const Case& k) { return reference_cuda(k, sc); }});
  return v;
}
#else
bool reference_cuda_available() { return false; }
std::optional<Outputs> reference_cuda(const Case&, ReferenceContract) { return std::nullopt; }
std::vector<ReferenceOracle> reference_cuda_oracles(const Case&) { return {}; }
#endif

}  // namespace flce
