// Order-dependent findings: a finding whose case passes alone in a fresh worker ("lost" by
// the per-case shrink) is replayed with the calls its worker made before it (its report.json
// "history", fuzz/findings/call_history.hpp) in a fresh process. If that shows the finding again, the
// earlier calls are cut down by ddmin (fuzz/findings/ddmin.hpp), then minimize() shrinks the last call
// with the earlier ones fixed, and then each earlier call with the rest fixed, while the
// budget lasts. The result is a sequence case (case/sequence.hpp): minimized.json, plus a
// repro.py that replays the calls in one process through one compiled function.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "case/sequence.hpp"

namespace flce {

struct HistoryShrinkOptions {
  double budget_s = 60;
  // The outcome line of the sequence's last call, the calls run in order in a fresh process.
  std::function<std::string(const Sequence&)> outcome;
  std::function<void(const std::string&)> log;
};

struct HistoryShrinkResult {
  bool reproduced = false;  // the full history showed the finding again
  std::string replayed;     // the full history's outcome
  Sequence minimized;
  size_t history_calls = 0;  // earlier calls in the history tried
  int runs = 0;
  bool fixed_point = false;  // false: the budget ended a step
};

// `earlier`: the history's calls, oldest first; `last`: the finding's case.
HistoryShrinkResult shrink_history(const std::vector<Case>& earlier, const Case& last, SequenceScope scope,
                                   const std::string& signature, const HistoryShrinkOptions& o);

// What the campaign's shrinker needs to write a sequence finding's files.
struct SequenceFindingOptions {
  std::string subject, subject_path, signatures_json;
  bool cuda_poisoned = false;  // also try the process's history
  HistoryShrinkOptions shrink;
};

// For the finding in `finding_dir` (case.json, report.json) with outcome `signature`, lost
// alone as `lost`: the new shrink status ("minimized-sequence: N calls ...", or `lost` with
// why the history did not help). On success writes minimized.json (the sequence) and repro.py.
// *runs gets the runs spent.
std::string shrink_lost_finding(const std::filesystem::path& finding_dir, const Case& c, const std::string& signature,
                                const std::string& lost, const SequenceFindingOptions& o, int* runs);

}  // namespace flce
