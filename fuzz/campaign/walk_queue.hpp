// The backend-ladder walks a campaign defers off its lanes (unknown signatures: one walk per graph
// configuration and signature), in the order the analysis workers take them. A signature's first
// walk goes before every other, and may start while analyses wait: without it the finding names no
// first failing stage, i.e. not which side (Dynamo, AOTAutograd, Inductor) breaks. On the H200 one
// campaign queued 37 walks behind its analyses and ran 1; later walks of a signature already walked
// wait until no analysis does.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>

namespace flce {

struct DeferredWalk {
  std::string key;  // "<graph>|<signature>" (the campaign's ladder key)
  std::string case_json;
};

class WalkQueue {
 public:
  // false when the key is already queued or being walked.
  bool push(DeferredWalk w);
  // The walk to start now, if any: a signature's first (queued order), else, when no analysis is
  // waiting, the oldest.
  std::optional<DeferredWalk> next(bool analyses_waiting);
  // A walk ended; `found` when it named a first failing stage (else the signature's next walk is
  // a first walk again: the case alone passed, or the worker died).
  void done(const std::string& key, bool found);
  bool empty() const { return queue_.empty(); }
  int64_t queued() const { return queued_; }

  static std::string signature_of(const std::string& key);

 private:
  std::deque<DeferredWalk> queue_;
  std::set<std::string> pending_;     // keys queued or being walked
  std::set<std::string> signatures_;  // signatures walked or being walked
  int64_t queued_ = 0;
};

}  // namespace flce
