#include "fuzz/campaign/explained.hpp"

namespace flce {

namespace {
constexpr size_t kKeepGraphs = 64;  // enough to decide; state.json stays small
}

void ExplainedCells::add(const std::vector<std::string>& cells, const std::string& graph, const std::string& signature) {
  const std::string what = signature.empty() ? "other" : signature;
  for (auto& cell : cells) {
    auto& graphs = seen[cell][what];
    if (graphs.size() < kKeepGraphs) graphs.insert(graph);
  }
}

std::map<std::string, ExplainedCells::Why> ExplainedCells::explained() const {
  std::map<std::string, Why> out;
  for (auto& [cell, by] : seen) {
    int all = 0;
    for (auto& [what, graphs] : by) all += static_cast<int>(graphs.size());
    for (auto& [what, graphs] : by) {
      const int n = static_cast<int>(graphs.size());
      if (what != "other" && n >= kExplainAfter && n >= kExplainedMajority * all) out[cell] = {what, n, all};
    }
  }
  return out;
}

std::set<std::string> ExplainedCells::cells() const {
  std::set<std::string> s;
  for (auto& [cell, why] : explained()) s.insert(cell);
  return s;
}

nlohmann::ordered_json ExplainedCells::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto& [cell, by] : seen)
    for (auto& [what, graphs] : by) j[cell][what] = graphs;
  return j;
}

ExplainedCells ExplainedCells::from_json(const nlohmann::json& j) {
  ExplainedCells e;
  if (!j.is_object()) return e;
  for (auto& [cell, by] : j.items())
    if (by.is_object())
      for (auto& [what, graphs] : by.items())
        if (graphs.is_array())
          for (auto& g : graphs)
            if (g.is_string()) e.seen[cell][what].insert(g.get<std::string>());
  return e;
}

void ExplainedCells::merge(const ExplainedCells& o) {
  for (auto& [cell, by] : o.seen)
    for (auto& [what, graphs] : by) {
      auto& into = seen[cell][what];
      for (auto& g : graphs)
        if (into.size() < kKeepGraphs) into.insert(g);
    }
}

}  // namespace flce
