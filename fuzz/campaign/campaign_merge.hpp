// flce campaign-merge: one campaign directory from the shards of a campaign that ran on
// several hosts (same subject, one seed per shard; scripts/nightly_shard.sh). Findings are
// deduplicated by signature across shards: counts add up, the first sighting (earliest UTC
// time) names its shard, and the saved case.json is the smallest reproducer any shard has.
// The result is itself a campaign directory (state.json, cases.jsonl, findings/, reports),
// so merged directories can be merged again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace flce {

struct MergeOptions {
  std::vector<std::string> shards;  // campaign directories
  std::string out;                  // replaced as a whole, or left untouched on error
  bool quiet = false;               // no summary on stdout
  // Known vs new (findings/known.hpp), filed again on the merged findings: a finding known in a
  // shard stays known, one this list matches becomes known. Also how last night's campaign is
  // read against today's list (one shard, an updated corpus/expectations.json or another
  // campaign's findings).
  std::vector<std::string> known;
};

struct MergeResult {
  int64_t findings = 0, cases_done = 0;
  int64_t new_findings = 0;  // not known (all of them without a known list)
};


// Throws CampaignInputError (campaign.hpp) naming the path and the problem: not a campaign,
// another subject, a campaign still running there, --out that is not a previous merge.
MergeResult merge_campaigns(const MergeOptions& o);

}  // namespace flce
