// The analyze task of a finding (ClusterFuzz's "analyze": reproduce and reliability), run as
// soon as a campaign first sees a failure, in a fresh worker of the lane that found it:
//   1. the case alone: does the failure show without what ran before it in the process?
//   2. the ablation: each feature reset to its default, one per run and cumulatively (a reset
//      that keeps the failure stays reset); those whose reset makes the failure go away are the
//      essential features, the cause is class + them (cause.hpp);
//   3. a marginal numeric finding (under kMarginalRatio x its bound) on kConfirmSeeds fresh
//      seeds of its configuration: how many exceed again, and by how much.
// Bounded: at most max_runs runs and budget_s seconds; a finding whose ablation could not finish
// (a crash, the budget) says so and keeps its outcome line as its key.
#pragma once
#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/findings/cause.hpp"
#include "fuzz/findings/finding.hpp"
#include "fuzz/findings/worker_client.hpp"

namespace flce {

// Differential campaigns (--baseline): the failure of one side, and whether the difference
// still shows in a run (the subject's and the baseline's reply).
struct Difference {
  Change change = Change::NONE;  // NONE: a plain campaign, only the subject matters
};

struct AnalyzeOptions {
  double budget_s = 120;
  int max_runs = 40;
  bool confirm_marginal = true;
  Difference diff;
  volatile std::sig_atomic_t* stop = nullptr;
  std::function<void(const std::string&)> log;
};

struct AnalyzeResult {
  CauseStatus status = CauseStatus::NOT_RUN;
  std::string cause, note;
  std::vector<std::string> essential, tested;
  int runs = 0;
  Confirmation confirm;
};

// Does this reply show the finding: the failure on the subject's side (a plain campaign), or
// the difference between the sides (regressed / fixed / changed)?
bool reply_shows(const FailureClass& f, const Difference& d, const WorkerReply& r);

// `run`: one case in the analysis's own worker. `first_ratio`: err/bound of the finding's case
// (0 when not numeric). Never throws for what the runs show; a `run` that throws (a worker that
// cannot start) ends the analysis NOT_RUN with the reason.
AnalyzeResult analyze(const Case& c, const FailureClass& f, double first_ratio,
                      const std::function<WorkerReply(const Case&)>& run, const AnalyzeOptions& o);

}  // namespace flce
