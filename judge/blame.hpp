// Three-way verdict: an out-of-bounds output is held against the oracle that should agree
// with it, and the side out of line is named. The subject's eager run is held against the
// same-contract CUDA reference (reference-cuda), compiled against eager, the reference
// against the subject's eager. Both sides over the bound is not the same news as one side:
// for the subject and the reference it puts the bound or the contract in doubt (MATH.md);
// for compiled and eager it clears torch.compile and blames the implementation.
#pragma once
#include <string>
#include <vector>

#include "judge/judge.hpp"

namespace flce {

struct Blame {
  std::string oracle, output;  // the out-of-bounds output (oracle: eager | compiled | reference-cuda)
  double ratio = 0;            // its err / bound
  std::string against;         // the oracle held against it
  bool against_ran = false;    // against produced this output and was judged
  double against_ratio = -1;   // against's err / bound for this output
  std::string against_finding; // against's finding for this output ("ok", "out-of-bounds", "nonfinite", ...)
  // subject | reference | compiled    one side out of line
  // bound-or-contract                 subject and reference both exceed (triage MATH.md)
  // implementation                    compiled and eager both exceed (not the compiler)
  // unknown                           the other side did not run
  std::string guilty;
  std::string line;  // "subject 1.97x bound, reference-cuda 0.31x: subject out of line"
};

// One Blame per out-of-bounds output of the named verdicts, in their order.
std::vector<Blame> blame(const std::vector<const OracleVerdict*>& verdicts);

}  // namespace flce
