#include "fuzz/campaign/case_compare.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace flce {

using json = nlohmann::json;

namespace {
uint64_t fnv64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}
}  // namespace

nlohmann::json comparable_fields(const std::string& case_json, const nlohmann::json& report) {
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json c = nlohmann::json::parse(case_json, nullptr, false);
  if (!c.is_object()) return out;
  const bool scalar = c.value("reduction", "mean") != "none";
  // What the contract adds to a case is how it is judged, not its inputs.
  c.erase("semantics");
  c.erase("grad_filter_eps");
  c.erase("grad_weight_split");
  c.erase("softmax_dtype");
  out["input"] = fmt::format("{:016x}", fnv64(c.dump()));
  if (!scalar) return out;
  // The reference value: the judge records no worst element where the error is 0 (got = fp64).
  json golden = nlohmann::json();
  if (report.contains("golden") && report["golden"].is_object() && report["golden"].contains("loss")) {
    const json& g = report["golden"]["loss"];
    golden = g.value("value", nlohmann::json());
    if (golden.is_null() && g.value("nan", 0) > 0) golden = "nan";  // JSON has no NaN: the summary counts it
  }
  for (auto& o : report.value("oracles", nlohmann::json::array())) {
    if (!o.is_object()) continue;
    for (auto& v : o.value("outputs", nlohmann::json::array())) {
      if (!v.is_object() || v.value("output", "") != "loss") continue;
      nlohmann::json l{{"finding", v.value("finding", "")}};
      const json fp64 = v.contains("fp64_at_worst") ? v["fp64_at_worst"] : golden;
      l["fp64"] = fp64;
      if (v.contains("got_at_worst")) l["got"] = v["got_at_worst"];  // a number, or "nan" / "inf" / "-inf"
      else if (v.value("max_abs_err", -1.0) == 0.0 && !fp64.is_null()) l["got"] = fp64;
      else l["got"] = nlohmann::json();  // unknown: not compared
      l["bound"] = v.contains("bound_at_worst") ? v["bound_at_worst"] : nlohmann::json();
      out["loss"][o.value("oracle", "?")] = l;
    }
  }
  return out;
}

}  // namespace flce
