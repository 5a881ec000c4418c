#include "fuzz/findings/call_history.hpp"

namespace flce {

nlohmann::json CallHistory::before(const Case& c, bool process_too) const {
  nlohmann::json h{{"compiled", nlohmann::json::array()}};
  if (auto it = per_function_.find(compiled_key(c)); it != per_function_.end())
    for (const auto& e : it->second) h["compiled"].push_back(e);
  if (process_too) {
    h["process"] = nlohmann::json::array();
    for (const auto& e : process_) h["process"].push_back(e);
  }
  return h;
}

void CallHistory::record(const std::string& key, const Case& c) {
  nlohmann::json e{{"order", order_++}, {"key", key}, {"case", nlohmann::json::parse(to_json(c, -1))}};
  auto& fn = per_function_[compiled_key(c)];
  fn.push_back(e);
  if (fn.size() > kHistoryPerFunction) fn.pop_front();
  process_.push_back(std::move(e));
  if (process_.size() > kHistoryPerProcess) process_.pop_front();
}

std::vector<Case> history_calls(const nlohmann::json& history, SequenceScope scope) {
  std::vector<Case> calls;
  const char* list = scope == SequenceScope::PROCESS ? "process" : "compiled";
  if (!history.is_object() || !history.contains(list) || !history[list].is_array()) return calls;
  for (const auto& e : history[list]) {
    try {
      calls.push_back(from_json(e.at("case").dump()));
    } catch (const std::exception&) {  // a history from another schema: that call is dropped
    }
  }
  return calls;
}

}  // namespace flce
