// Fuzzer of what a campaign reads back from its --out directory on resume (and campaign-merge
// from each shard): state.json (fuzz/campaign/campaign_state.cpp parse_campaign_state) and a finding's
// finding.json adopted when state.json does not know it (parse_adopted_finding). Documented:
// CampaignStateError for a bad state, nullopt for a finding.json that is not one; anything
// else escaping is a crash. An accepted state must reach a fixed point through to_json.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/campaign/campaign_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto f = flce::parse_adopted_finding(text, "finding-id"))
    if (f->id != "finding-id" || f->signature.empty() || f->count != 1) std::abort();
  flce::CampaignState s;
  try {
    s = flce::parse_campaign_state(text);
  } catch (const flce::CampaignStateError&) {
    return 0;
  }
  const std::string once = s.to_json().dump();
  const std::string twice = flce::parse_campaign_state(once).to_json().dump();  // must not throw
  if (once != twice) {
    std::fprintf(stderr, "campaign_state_fuzzer: state changed through to_json\n%s\n%s\n", once.c_str(), twice.c_str());
    std::abort();
  }
  return 0;
}
