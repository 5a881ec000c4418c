// Explained cells: a field value (a coverage cell, "accum_dtype=fp32") whose compiled outcome has
// been one known failure (a signature of judge/signatures.json) on kExplainAfter or more graph
// configurations, and on at least kExplainedMajority of the configurations with that value
// (accum_dtype=fp32 -> tier 1 on torch 2.11). Every further configuration with it would mostly
// re-show that failure at a full trace each, so the sampler gives such values a small share
// (coverage_guide.hpp) and spends the compiled lane where the outcome has not been seen.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace flce {

inline constexpr int kExplainAfter = 3;
inline constexpr double kExplainedMajority = 0.8;
inline constexpr uint64_t kExplainedShare = 10;  // 1 family in 10 may still draw an explained value

struct ExplainedCells {
  // cell -> compiled outcome ("<known signature>" or "other") -> graph configurations (capped)
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;

  // A compiled case of `graph` with these cells: `signature` when it failed to compile with a
  // known signature, "" for anything else (a pass, a numeric finding, an unknown bucket).
  void add(const std::vector<std::string>& cells, const std::string& graph, const std::string& signature);
  struct Why {
    std::string signature;
    int configurations = 0, of = 0;
  };
  std::map<std::string, Why> explained() const;
  std::set<std::string> cells() const;  // the explained cells' names
  nlohmann::ordered_json to_json() const;
  static ExplainedCells from_json(const nlohmann::json& j);
  void merge(const ExplainedCells& o);
};

}  // namespace flce
