// Per-phase GPU time via CUDA events recorded around stream work: no host syncs while
// the work is queued; totals() syncs once at the end.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace flce {

class PhaseTimer {
 public:
  explicit PhaseTimer(cudaStream_t stream) : stream_(stream) {}
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  void begin(const std::string& phase);  // closes the open phase, if any
  void end();
  std::map<std::string, double> totals_ms();  // waits for the recorded events
  void clear();

 private:
  struct Span {
    std::string phase;
    cudaEvent_t start, stop;
  };
  cudaStream_t stream_;
  std::vector<Span> spans_;
  bool open_ = false;
};

// RAII scope for an optional timer.
class PhaseScope {
 public:
  PhaseScope(PhaseTimer* t, const std::string& phase) : t_(t) {
    if (t_) t_->begin(phase);
  }
  ~PhaseScope() {
    try {
      if (t_) t_->end();
    } catch (...) {  // never throw from a destructor; the next CUDA check reports it
    }
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PhaseTimer* t_;
};

}  // namespace flce
