// What a campaign worker's process ran before a case: the calls per compiled function
// (case/sequence.hpp compiled_key: the subject host's compiled-function cache key) and the
// calls of the whole process. A finding's result line carries the bounded history
// ({"compiled": [...], "process": [...]}, oldest first, each {"order", "key", "case"}), so a
// finding that passes alone can be replayed with what ran before it (fuzz/history_shrink).
#pragma once
#include <cstddef>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "case/case.hpp"
#include "case/sequence.hpp"

namespace flce {

inline constexpr size_t kHistoryPerFunction = 16;
inline constexpr size_t kHistoryPerProcess = 16;

class CallHistory {
 public:
  // The calls before `c` on its compiled function; with `process_too` (a CUDA-poisoning or
  // dying finding), also the process's last calls.
  nlohmann::json before(const Case& c, bool process_too) const;
  void record(const std::string& key, const Case& c);

 private:
  std::map<std::string, std::deque<nlohmann::json>> per_function_;
  std::deque<nlohmann::json> process_;
  int64_t order_ = 0;
};

// The calls a history names (its "compiled" or "process" list), oldest first. Entries that are
// no valid case any more are skipped.
std::vector<Case> history_calls(const nlohmann::json& history, SequenceScope scope);

}  // namespace flce
