// A night: one campaign against a findings store (`flce campaign --store DB`). Before exploring,
// the store's open findings become the known list (DIR/night/known.json, filed "store DB: <id>")
// and are re-run on tonight's subject (progression.hpp); after the campaign, tonight is recorded
// in the store (store.hpp) and report.md / report.json open with New, Fixed and Still open.
// A resumed night keeps its label, identity and progression (DIR/night/night.json).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/campaign/campaign.hpp"
#include "nights/store.hpp"
#include "oracles/subject_identity.hpp"

namespace flce {

struct NightOptions {
  std::string store;  // the SQLite file (created on the first night)
  std::string night;  // the night's label; "": today's UTC date (shards of one night share it)
  SubjectIdentity identity;
};

struct NightResult {
  CampaignResult campaign;
  int64_t new_findings = 0, regressed = 0, fixed = 0, still_open = 0;
  nlohmann::ordered_json section;  // report.json's "night"
};

// Throws StoreInputError (bad store: exit 2), CampaignInputError, std::runtime_error.
NightResult run_night(CampaignOptions o, const NightOptions& n);

// `flce store record DB DIR`: a finished campaign directory (a merge's too) recorded as one
// night of the store, without progression. Returns what became of each finding.
RecordOutcome record_campaign_dir(Store& store, const std::filesystem::path& dir, const std::string& night,
                                  const SubjectIdentity& identity, const std::vector<ProgressionResult>& progression = {});

// The night's sections, from the store after recording (night_report.cpp): report.json's "night".
nlohmann::ordered_json night_section(const Store& store, const std::string& night, const SubjectIdentity& identity,
                                     const std::vector<ProgressionResult>& progression, const RecordOutcome& recorded);
// report.md gets the sections right under its title, report.json a "night" object first.
void write_night_sections(const std::filesystem::path& dir, const nlohmann::ordered_json& section);

// Today's UTC date, YYYY-MM-DD.
std::string default_night_label();

}  // namespace flce
