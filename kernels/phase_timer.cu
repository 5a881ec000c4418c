#include "kernels/phase_timer.hpp"

#include "kernels/cuda_check.hpp"

namespace flce {

PhaseTimer::~PhaseTimer() {
  for (auto& s : spans_) {
    cudaEventDestroy(s.start);
    cudaEventDestroy(s.stop);
  }
}

void PhaseTimer::begin(const std::string& phase) {
  if (open_) end();
  Span s{phase, nullptr, nullptr};
  FLCE_CUDA_CHECK(cudaEventCreate(&s.start), "PhaseTimer " + phase);
  FLCE_CUDA_CHECK(cudaEventCreate(&s.stop), "PhaseTimer " + phase);
  FLCE_CUDA_CHECK(cudaEventRecord(s.start, stream_), "PhaseTimer " + phase);
  spans_.push_back(s);
  open_ = true;
}

void PhaseTimer::end() {
  if (!open_) return;
  FLCE_CUDA_CHECK(cudaEventRecord(spans_.back().stop, stream_), "PhaseTimer " + spans_.back().phase);
  open_ = false;
}

std::map<std::string, double> PhaseTimer::totals_ms() {
  end();
  std::map<std::string, double> out;
  for (auto& s : spans_) {
    FLCE_CUDA_CHECK(cudaEventSynchronize(s.stop), "PhaseTimer " + s.phase);
    float ms = 0;
    FLCE_CUDA_CHECK(cudaEventElapsedTime(&ms, s.start, s.stop), "PhaseTimer " + s.phase);
    out[s.phase] += ms;
  }
  return out;
}

void PhaseTimer::clear() {
  end();
  for (auto& s : spans_) {
    FLCE_CUDA_CHECK(cudaEventDestroy(s.start), "PhaseTimer clear");
    FLCE_CUDA_CHECK(cudaEventDestroy(s.stop), "PhaseTimer clear");
  }
  spans_.clear();
}

}  // namespace flce
