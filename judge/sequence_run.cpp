#include "judge/sequence_run.hpp"

namespace flce {

SequenceReport run_sequence(const Sequence& s, const RunOptions& opt, const std::function<void(size_t)>& on_call) {
  SequenceReport out;
  for (size_t k = 0; k < s.calls.size(); ++k) {
    if (on_call) on_call(k);
    RunReport r = run_case(s.calls[k], opt);
    if (k + 1 == s.calls.size()) {
      out.last = std::move(r);
      break;
    }
    out.earlier.push_back(r.outcome);
    if (!r.subject_died.empty()) {
      out.died_at = static_cast<int>(k);
      r.outcome = "earlier-call-died:" + r.outcome;  // never the finding the sequence is about
      out.last = std::move(r);
      break;
    }
  }
  return out;
}

}  // namespace flce
