#include "case/contract.hpp"

#include <fmt/format.h>

namespace flce {

void apply_contract(const nlohmann::json& contract, SampleSpace& sp) {
  sp.semantics = Semantics::LIGER;
  sp.dtypes.clear();
  sp.grad_filter_eps.clear();
  sp.grad_filter_devices.clear();
  sp.grad_weight_split = false;
  sp.softmax_dtype = "fp32";
  if (!contract.is_object()) return;
  sp.semantics = parse_semantics(contract.value("semantics", "liger"));
  for (auto& d : contract.value("dtypes", nlohmann::json::array()))
    if (auto dt = d.is_string() ? parse_dtype(d.get<std::string>()) : std::nullopt) sp.dtypes.insert(*dt);
  // A declared gradient filter (contract.py has checked its form): eps per input dtype.
  const auto approx = contract.value("approximation", nlohmann::json());
  const auto eps_by_dtype = approx.is_object() && approx.value("name", "") == "grad_filter"
                                ? approx.value("eps", nlohmann::json::object()) : nlohmann::json::object();
  if (eps_by_dtype.is_object())
    for (auto& [d, eps] : eps_by_dtype.items())
      if (auto dt = parse_dtype(d); dt && eps.is_number()) sp.grad_filter_eps[*dt] = eps.get<double>();
  const auto devices = approx.is_object() ? approx.value("devices", nlohmann::json::array()) : nlohmann::json::array();
  for (auto& d : devices) sp.grad_filter_devices.insert(d == "cuda" ? Device::CUDA : Device::CPU);
  sp.grad_weight_split = contract.value("grad_weight_form", "fused") == "split";
  sp.softmax_dtype = contract.value("softmax_dtype", "fp32");
}

std::string contract_mismatch(const Case& c, const SampleSpace& sp) {
  if (c.is_op()) return "";
  const Case k = under_contract(c, sp);
  std::string out;
  auto differ = [&](const std::string& field, const std::string& here, const std::string& theirs) {
    if (here != theirs) out += fmt::format("{}{} {} (its contract: {})", out.empty() ? "" : ", ", field, here, theirs);
  };
  differ("semantics", std::string(name(c.semantics)), std::string(name(k.semantics)));
  if (c.input_dtype != k.input_dtype) {
    std::string supported;
    for (DType d : sp.dtypes) supported += (supported.empty() ? "" : "/") + std::string(dtype_name(d));
    differ("input dtype", std::string(dtype_name(c.input_dtype)), supported + " only");
  }
  differ("grad_weight_form", c.grad_weight_split ? "split" : "fused", k.grad_weight_split ? "split" : "fused");
  differ("softmax_dtype", c.softmax_dtype, k.softmax_dtype);
  differ("grad_filter_eps", fmt::format("{:g}", c.grad_filter_eps), fmt::format("{:g}", k.grad_filter_eps));
  return out;
}

}  // namespace flce
