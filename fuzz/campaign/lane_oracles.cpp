#include "fuzz/campaign/lane_oracles.hpp"

#include "oracles/reference_cuda.hpp"

namespace flce {

void configure_lane(Lane l, const Case& c, RunOptions& opt) {
  if (l == Lane::COMPILED) return;  // everything, as `flce run` without flags
  opt.compiled = false;
  opt.ladder = false;
  for (auto& ref : reference_cuda_oracles(c)) opt.extra_oracles.push_back(ref);  // empty on CPU
}

void learn_ladders(const nlohmann::json& entries, const Case& c, LadderMemo& memo) {
  if (!entries.is_array()) return;
  for (auto& e : entries) {
    LadderMemo::Entry m;
    for (auto& st : e.value("ladder", nlohmann::json::array()))
      m.ladder.push_back({st.value("backend", ""), st.value("pass", false), st.value("what", "")});
    m.first_failing_stage = e.value("first_failing_stage", "");
    if (m.ladder.empty()) continue;
    const std::string sig = e.value("signature", "");
    memo.entries[e.value("any_graph", false) ? LadderMemo::any_graph(sig) : LadderMemo::key(c, sig)] = m;
  }
}

}  // namespace flce
