// A sequence case (case/sequence.hpp) through the differential loop: each call in order with
// one RunOptions, so one subject process and its compiled functions serve them all; the last
// call's report is the sequence's. An earlier call whose subject process died ends the
// sequence there (its successors would run in a fresh interpreter, without the history).
#pragma once
#include <string>
#include <vector>

#include "case/sequence.hpp"
#include "judge/differential.hpp"

namespace flce {

struct SequenceReport {
  RunReport last;                      // the judged call (or the earlier call that died)
  std::vector<std::string> earlier;    // outcomes of the earlier calls, in order
  int died_at = -1;                    // index of an earlier call whose subject died, else -1
};

// `on_call(k)` (may be empty) is told before call k starts.
SequenceReport run_sequence(const Sequence& s, const RunOptions& opt,
                            const std::function<void(size_t)>& on_call = {});

}  // namespace flce
