// What a campaign remembers under its --out directory: which cases ran, the findings
// deduplicated by outcome signature, and the clock. state.json is the one authority;
// it is rewritten (temp + fsync + rename) at each group commit (campaign.cpp, kCommitEveryS),
// so a kill -9 at any moment leaves either the old or the new state, never a torn one.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/campaign/coverage.hpp"
#include "fuzz/campaign/explained.hpp"
#include "fuzz/campaign/lanes.hpp"
#include "fuzz/findings/finding.hpp"
#include "report/write.hpp"

namespace flce {

// Durable writes (write_atomic, append_durable, sync_dir) are report/write.hpp's.

// The sample stream of one seed: indices below `next` are all done; `done_above` holds
// the ones finished out of order above it (several workers finish in any order).
struct SeedCursor {
  uint64_t next = 0;
  std::set<uint64_t> done_above;
  bool done(uint64_t i) const { return i < next || done_above.count(i); }
  void mark(uint64_t i);
};

struct CampaignState {
  std::string subject, subject_path;
  nlohmann::json subject_git;  // the tree's repository, ref and commit (--subject-git); null when none
  uint64_t family_size = 1;  // what a sample index means (sampler.hpp); fixed for a campaign
  std::string device;        // of the sampled cases ("cpu", "cuda"); "" in states written before it
  std::map<uint64_t, SeedCursor> seeds;        // the compiled lane's stream (and the campaign's before lanes)
  std::map<uint64_t, SeedCursor> eager_seeds;  // the eager lane's (lanes.hpp), by the campaign's seed
  std::map<std::string, LaneTotals> lanes;     // by lane name: cases and where their time went
  std::map<std::string, SharedLadder> ladders;  // "<graph>|<signature>" or "*|<known signature>": walked once
  std::map<std::string, int64_t> compile_failures;  // "<graph>|<signature>": compiled runs that raised it
  std::set<std::string> corpus_done;
  int64_t cases_done = 0, runs = 0, worker_restarts = 0;
  // Length of cases.jsonl that belongs to committed cases; a resume cuts the journal back
  // to it, so every committed case is in it exactly once.
  uint64_t journal_bytes = 0;
  double elapsed_s = 0;  // time spent running, summed over resumed runs
  std::optional<double> first_finding_s;
  std::map<std::string, int64_t> outcomes;  // every outcome signature, findings or not
  // Passing cases that needed the subject's declared approximation (its contract), per
  // "<oracle>:<output>": how many, and the largest err / exact bound among them. Not findings;
  // the report gives them their own section.
  struct Approximated {
    int64_t cases = 0;
    double worst_over_exact = 0;
  };
  std::map<std::string, Approximated> approximated;
  // Distinct compiled-graph configurations run (short hashes of sampler.hpp's graph_key):
  // cases/min alone would hide a campaign that only feeds new values to old graphs.
  std::set<std::string> graphs;
  int64_t families_retired = 0, cases_retired = 0;  // cases left unrun by retired families
  // Cases in flight when the budget ran out, killed (not waited for), by the step they were in.
  std::map<std::string, int64_t> abandoned;
  // Coverage guidance (coverage_guide.hpp): cases and findings per field value and lane; the
  // candidate each guided family runs; the neighbours of findings still to run (key, case JSON).
  CoverageTable coverage;
  ExplainedCells explained;  // the compiled lane's outcome per field value (explained.hpp)
  std::map<uint64_t, uint32_t> family_picks;
  std::map<uint64_t, uint32_t> eager_picks;  // the eager lane's groups' picks
  uint64_t eager_group = 1;  // cases per eager group (sampler.hpp, eager_groups); 1: plain cases
  std::vector<std::pair<std::string, std::string>> neighbours;
  std::vector<Finding> findings;            // in order of first sight
  nlohmann::json environment;               // the workers' fingerprint (torch, Python, ...)
  // What the subject's callable takes, as its workers read it at start (SubjectCapabilities:
  // {"params": [...], "lacks": [...], "callable": ...}); null when unknown. Sampled cases never
  // use what it lacks.
  nlohmann::json capabilities;
  // Some case got past the call into the subject: an oracle produced outputs, or the subject
  // failed in its own code. From then on the subject is usable, whatever fails ("subject
  // unusable" is only ever decided on the first cases; campaign.cpp, watch_usable).
  bool subject_ran = false;
  // Set when the campaign stopped because the subject cannot run at all ("subject unusable").
  std::string unusable;

  Finding* finding(const std::string& signature);
  nlohmann::ordered_json to_json() const;
  static CampaignState from_json(const nlohmann::json& j);
};

// state.json that is not a campaign state (not JSON, unknown schema, a field missing or of
// the wrong type or range); what() names the field.
struct CampaignStateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// state.json's text as a state; throws CampaignStateError, nothing else.
CampaignState parse_campaign_state(std::string_view text);
// A findings/<id>/finding.json the state does not name yet (a run killed between renaming the
// finding into place and writing state.json): the finding to adopt, or nullopt when the text
// is not one (not a JSON object, no string "signature"); never throws for bad text.
std::optional<Finding> parse_adopted_finding(std::string_view text, const std::string& id);
}  // namespace flce
