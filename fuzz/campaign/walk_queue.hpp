// The backend-ladder walks a campaign defers off its lanes (one walk per graph configuration and
// signature; a known signature's one per campaign), in the order the analysis workers take them.
// An unknown signature's first walk goes before every other, and may start while analyses wait:
// without it the finding names no first failing stage, i.e. not which side (Dynamo, AOTAutograd,
// Inductor) breaks. On the H200 one campaign queued 37 walks behind its analyses and ran 1. Later
// walks of a signature wait until no analysis does, and so does a known signature's walk
// ("*|<sig>"): the known list already names that bug and, where it pins one, its stage, while a
// dynamic-shape walk can take minutes (pytorch#181735's, about 100 s on the H200).
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
  // The walk to start now, if any: an unknown signature's first (queued order), else, when no
  // analysis is waiting, the oldest.
  std::optional<DeferredWalk> next(bool analyses_waiting);
  // How a walk ended: it named a first failing stage; every rung passed (the case alone does not
  // fail: an order-dependent failure); or it was lost (the walking worker died, or was stopped).
  enum class End { STAGE, PASSED_ALONE, LOST };
  // A walk ended. Only a lost one makes the signature's next walk a first walk again: on the H200
  // (seed 167) an order-dependent wrong loss was walked again as a first walk, ahead of the
  // analyses, for graph after graph (each passing alone), and three of four planted bugs went
  // without their cause.
  void done(const std::string& key, End end);
  bool empty() const { return queue_.empty(); }
  int64_t queued() const { return queued_; }

  static std::string signature_of(const std::string& key);
  static bool known(const std::string& key);  // a known signature's one walk per campaign

 private:
  std::deque<DeferredWalk> queue_;
  std::set<std::string> pending_;     // keys queued or being walked
  std::set<std::string> signatures_;  // signatures walked or being walked
  int64_t queued_ = 0;
};

}  // namespace flce
