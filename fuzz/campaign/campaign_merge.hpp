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
};

struct MergeResult {
  int64_t findings = 0, cases_done = 0;
};

// Throws CampaignInputError (campaign.hpp) naming the path and the problem: not a campaign,
// another subject, a campaign still running there, --out that is not a previous merge.
MergeResult merge_campaigns(const MergeOptions& o);

}  // namespace flce
