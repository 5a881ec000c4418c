// A campaign's reports: report.md (humans, PR comments), report.json (tools), junit.xml
// (CI: one testcase per finding signature, failing, plus the pass/unsupported buckets).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fuzz/campaign/campaign_state.hpp"

namespace flce {

struct RunStats {  // this invocation, next to the state's campaign-wide totals
  int64_t cases_this_run = 0, max_cases = -1;
  int64_t graphs_this_run = 0;  // new graph configurations (CampaignState::graphs)
  double first_ready_s = -1;    // the first worker's start-up (time to first finding includes it)
  nlohmann::json worker_starts = nlohmann::json::array();  // per worker start: lane, ready_s, startup_ms per step, host
  nlohmann::json zygote;  // the subject-host zygote: ready_s, preload_ms, refusing (null: none ran)
  std::map<std::string, int> analyses;  // analyses run on an analysis worker ("own") or a lent slot ("lent")
  std::string lend_from = "eager";      // whose slots they borrowed while exploring (--lend-from)
  int64_t neighbours_dropped = 0;       // neighbours of known findings, not run
  int64_t walks_deferred = 0, walks_deferred_done = 0;  // ladder walks left to analysis workers, and walked
  int64_t spare_swaps = 0;  // dead compiled workers replaced by the ready spare instead of a cold start
  // Where the time after exploration went, each a campaign time (s): exploration ended, the
  // analyses were stopped or done, the shrink phase ended (a campaign's overrun, phase by phase).
  nlohmann::ordered_json ending = nlohmann::ordered_json::object();
  uint64_t family_size = 1;
  double wall_s = 0, minutes = 0;
  uint64_t seed = 0;
  int workers = 1;
  std::string lanes;  // "eager=6,compiled=2" (lanes.hpp); empty: merged
  bool interrupted = false;
  std::vector<std::string> known;  // --known sources; empty: no known list (no New/Known split)
  std::string identity;            // the subject's content identity (CampaignOptions::identity)
  std::string baseline;            // --baseline: the differential campaign's other subject
  // Merged campaigns: one object per shard ({dir, seeds, cases_done, findings, ...}); the
  // reports then name the shards instead of one seed. Null for a single campaign.
  nlohmann::ordered_json shards;
};

// `named`: the directory the repro commands name, when the reports are written elsewhere
// first (a merge builds its result aside); empty: `dir`.
void write_reports(const std::filesystem::path& dir, const CampaignState& st, const RunStats& rs,
                   const std::filesystem::path& named = {});
// The lines printed at the end: totals, cases/min, time to first finding, where the report is.
std::string summary_text(const std::filesystem::path& dir, const CampaignState& st, const RunStats& rs);
// findings/<id>/finding.json: signature, first case and time, count of hits.
void write_finding_json_to(const std::filesystem::path& finding_dir, const Finding& f);
std::string repro_command(const std::filesystem::path& dir, const CampaignState& st, const Finding& f);

}  // namespace flce
