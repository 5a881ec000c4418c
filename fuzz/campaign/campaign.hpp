// flce campaign: a time-boxed, resumable exploration of one subject. The parent draws
// cases (the --corpus files first, then sample_case(seed, index)), hands them to
// isolated `flce worker` processes and records findings deduplicated by outcome
// signature under --out. The parent never starts Python or torch; see process/process.hpp.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/campaign/lanes.hpp"
#include "fuzz/findings/worker_client.hpp"

namespace flce {

struct CampaignOptions {
  double minutes = 0;       // budget of the whole campaign, summed over resumed runs
  int64_t max_cases = -1;   // likewise; -1: no limit
  std::string out, corpus, subject, subject_path;
  nlohmann::json subject_git;  // --subject-git's record (cli/commands.hpp), kept in state.json; null without
  int workers = 1;  // all lanes together
  int cpus = 0;     // CPUs the campaign may use (compile threads per worker); 0: the affinity mask
  // Workers per lane (lanes.hpp); empty: `workers` compiled workers (the campaign before lanes).
  std::vector<LanePlan> lanes;
  uint64_t seed = 1;
  double case_timeout_s = 600;  // one case: golden + eager + compiled + ladder
  double worker_mem_gib = 16;   // RLIMIT_DATA of each worker; 0: none
  bool quiet = false;           // no progress line, no per-finding lines
  std::string flce_exe;         // the binary the workers run (this one)
  bool cuda = false;            // sampled cases on the GPU (corpus cases keep their device)
  int gpus = -1;                // workers spread round-robin over this many GPUs; -1: all visible
  double minimize_s = 60;       // per finding, after exploration (campaign_shrink.hpp); 0: off
  bool check_repros = false;    // each repro.py the shrink writes is then run alone (script_check.hpp)
  // Sampled cases per graph configuration (sampler.hpp); 1: none. 8, not 32: after its compile a
  // family's cases cost a fifth of a second each on the H200, so 32 of them held a compiled worker
  // as long as four more compiles would, and the compiled lane is there for graphs.
  uint64_t family_size = 8;
  // The eager lane's groups: cases sharing every flag and V, varying BT, H and values, run by one
  // worker in a row so the subject's kernel caches hit (sampler.hpp eager_groups); 1: plain cases.
  uint64_t eager_group = 16;
  // A family is retired by a compile failure that its graph configuration has now shown N
  // times in the campaign (any family, any worker, resumed runs too; CampaignState::ladders):
  // its other cases would only show that failure again, at a full trace each (a failed
  // compile is never cached). 2: at the first repeat of a known failure. 0: never.
  int retire_after = 2;
  // Coverage guidance (coverage_guide.hpp): candidates drawn per sampled case (or family), the
  // one covering the most uncovered cells runs; and a new finding's neighbours run next.
  // 1: the plain stream (no candidates, no neighbours).
  int candidates = 8;
  // Known vs new (findings/known.hpp): expectation files or earlier campaigns; a finding that
  // matches is filed under Known (counted, not shrunk again).
  std::vector<std::string> known;
  // The subject's content identity (oracles/subject_identity.hpp: "tree 3f2a12345678 = git
  // ead96b618e5c"), named by the reports; "" when not computed.
  std::string identity;
  // A differential campaign: every case also runs on this subject (same inputs, same lane) and
  // the findings are the cases whose outcome differs (regressed, fixed, changed).
  std::string baseline, baseline_path;
  double analyze_s = 120;  // one finding's analysis (ablation, marginal confirmation)
  // Analyses that run on workers of their own, beside the exploring ones, before any lends a
  // slot of its lane (-1: a quarter of --workers, at least one). With two workers, lending
  // halved the compiled lane for minutes each time a compiled failure was analyzed.
  int analysis_workers = -1;
  // Whose slots those analyses borrow while exploring: false (default), the eager lane's, with the
  // compiled lane's share added, whichever lane found the failure (compiled slots stay on new graph
  // configurations); true, the finding's own lane (the behaviour before afa0270, kept for A/B runs
  // and for a user whose eager lane matters more than the compiled one).
  bool lend_from_finder = false;
  // Where a compiled failure of an unknown signature walks the backend ladder: false (default),
  // after its verdict on an analysis worker, so a walk never holds a lane's slot (on the H200 one
  // walk held the only compiled slot of a campaign for 123 s, until the case timed out); true:
  // in the lane's worker, before the verdict. Known signatures walk once per campaign either way.
  bool walk_in_lane = false;
  // Started workers kept aside for the compiled lane: when one of its workers dies (a CUDA fault,
  // a crash, a timeout) the spare takes its slot at once and another starts behind it. -1: one
  // on CUDA when the campaign has a compiled lane (ten campaigns on the H200 lost 17-26 s of their
  // only compiled slot per restart), none on CPU; 0: none; 1: one.
  int spare_workers = -1;
  // Stop exploring once this many new findings have a settled cause (0: never): a test that
  // waits for what it asserts instead of its clock; the shrink phase still follows.
  int stop_after_findings = 0;
  // After the exploration budget, everything else (the analyses still running, shrinking) ends
  // within this many seconds; what it cuts, a resumed run continues. 20 s by default, so that a
  // campaign's wall time is its --minutes plus at most 30 s (issue #38: the old 120 s default let
  // `--minutes 5` run 7 minutes); a nightly that wants longer shrinks says so with --grace-s.
  double grace_s = 20;
};


// Bad flags, an unreadable corpus, an unknown subject, a state of another campaign.
struct CampaignInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CampaignResult {
  int64_t findings = 0, cases_done = 0;
  int64_t new_findings = 0, known_findings = 0;  // findings = new + known
};

// Runs (or resumes) the campaign and writes report.md, report.json and junit.xml.
// Throws CampaignInputError for bad input, std::runtime_error when flce itself fails.
CampaignResult run_campaign(const CampaignOptions& o);

// The worker side (`flce worker`): reads {"key","case"} lines on stdin, writes stage and
// result lines on stdout (see campaign_worker.cpp). Returns the process exit code.
struct CampaignWorkerOptions {
  std::string subject, subject_path;
  std::string baseline, baseline_path;  // a differential campaign's second subject
  double mem_gib = 0;
};
int serve_worker(const CampaignWorkerOptions& o);


}  // namespace flce
