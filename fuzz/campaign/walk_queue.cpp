#include "fuzz/campaign/walk_queue.hpp"

#include <algorithm>

#include "fuzz/campaign/lanes.hpp"

namespace flce {

std::string WalkQueue::signature_of(const std::string& key) {
  const size_t bar = key.find('|');
  return bar == std::string::npos ? key : key.substr(bar + 1);
}

bool WalkQueue::push(DeferredWalk w) {
  if (!pending_.insert(w.key).second) return false;
  queue_.push_back(std::move(w));
  ++queued_;
  return true;
}

bool WalkQueue::known(const std::string& key) { return key.rfind(std::string(kAnyGraph) + "|", 0) == 0; }

std::optional<DeferredWalk> WalkQueue::next(bool analyses_waiting) {
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const DeferredWalk& w) {
    return !known(w.key) && !signatures_.count(signature_of(w.key));
  });
  if (it == queue_.end()) {
    if (analyses_waiting || queue_.empty()) return std::nullopt;
    it = queue_.begin();
  }
  DeferredWalk w = std::move(*it);
  queue_.erase(it);
  signatures_.insert(signature_of(w.key));
  return w;
}

void WalkQueue::done(const std::string& key, End end) {
  pending_.erase(key);
  if (end == End::LOST) signatures_.erase(signature_of(key));
}

}  // namespace flce
