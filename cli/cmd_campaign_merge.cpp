// flce campaign-merge: the shards of a multi-host campaign (one seed per shard, see
// scripts/nightly_shard.sh) merged into one campaign directory with one report.
#include <cstdio>

#include "cli/commands.hpp"
#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/campaign_merge.hpp"

namespace flce::cli {

void add_campaign_merge_command(CLI::App& app) {
  auto* c = app.add_subcommand("campaign-merge",
                               "Merge campaign shards (same subject) into one directory: findings deduplicated by "
                               "signature, counts summed, the smallest reproducer kept; report.md/json, junit.xml");
  static MergeOptions o;
  c->add_option("shards", o.shards, "Campaign directories (flce campaign --out) to merge")->required();
  c->add_option("--out", o.out, "Merged directory; replaced as a whole (a previous merge only), untouched on error")
      ->required();
  c->add_flag("--quiet", o.quiet, "No summary on stdout");
  c->add_option("--known", o.known,
                "Expectation files (corpus/expectations.json) or earlier campaign directories: merged findings "
                "they match are filed under Known (a finding known in a shard stays known); exit 1 then means "
                "a new finding. One shard and --known: last night's campaign read against today's list");
  c->callback([] {
    try {
      MergeResult r = merge_campaigns(o);
      exit_code() = (o.known.empty() ? r.findings : r.new_findings) ? kFinding : kOk;  // as flce campaign
    } catch (const CampaignInputError& e) {
      std::fprintf(stderr, "flce campaign-merge: %s\n", e.what());
      exit_code() = kBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "flce campaign-merge: internal error: %s\n", e.what());
      exit_code() = kInternal;
    }
  });
}

}  // namespace flce::cli
