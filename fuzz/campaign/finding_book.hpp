// Where a campaign files its failing cases (sightings) as findings, one finding per cause:
//   - a sighting whose case carries the essential features of an analyzed finding of its failure
//     class is counted there (the most specific cause wins), with every output it shows;
//   - one whose class has a finding still being analyzed waits (parked) until that analysis ends;
//   - anything else is a new finding, keyed by its outcome line until its analysis
//     (findings/analyze.hpp) names the cause; then it is renamed after the cause, or merged into
//     the finding that already has that cause, and its parked sightings are filed again.
// Crashes, timeouts and flce's own errors have no failure class: they are keyed by outcome line.
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/campaign/campaign_state.hpp"
#include "fuzz/findings/analyze.hpp"
#include "fuzz/findings/known.hpp"

namespace flce {

// One failing case as the campaign saw it.
struct Sighting {
  std::string key, lane, case_json, outcome, detail, worker_log, stacks;
  nlohmann::json report;
  bool cuda_poisoned = false;
  // --baseline: the difference, and the baseline's side ("" / null in a plain campaign).
  Change change = Change::NONE;
  std::string baseline_outcome;
  nlohmann::json baseline_report;
};

// What the campaign must do next for a new finding: analyze it in a fresh worker of its lane.
struct AnalysisRequest {
  std::string finding_id;
  FailureClass failure;
  Case c;
  std::string lane;      // what its runs use (Finding::work_lane)
  double first_ratio = 0;
  Difference diff;
  std::string found_in;  // the lane that found it: it lends the slot the analysis runs in
};

class FindingBook {
 public:
  // `torch`, `cuda`: where the campaign runs (known lists apply per torch and device).
  FindingBook(std::filesystem::path dir, CampaignState& st, const KnownList& known, bool cuda)
      : dir_(std::move(dir)), st_(st), known_(known), cuda_(cuda) {}

  struct Filed {
    Finding* finding = nullptr;  // where it was counted or created; null: parked
    bool fresh = false;          // a new finding
    std::optional<AnalysisRequest> analyze;
  };
  // `at_s`: the campaign clock.
  Filed file(const Sighting& s, double at_s);

  // The analysis of finding `id` ended: its cause, merged or renamed; whether it is known; then
  // the parked sightings of its class are filed again. Returns the analyses to start next (a
  // parked sighting no cause explains becomes a new finding). `torch`: the workers'.
  std::vector<AnalysisRequest> resolve(const std::string& id, const AnalyzeResult& r, double at_s);

  // Exploration and analysis are over: a finding still pending keeps its outcome line (`why`),
  // and parked sightings that no cause explains become one finding per class, unanalyzed.
  void close(const std::string& why, double at_s);

  // Findings found before this run (a resume) whose analysis did not finish: analyze them again.
  std::vector<AnalysisRequest> pending_requests();

  size_t parked() const { return parked_.size(); }
  // After resolve(id): whether the finding that tentative id became (renamed, or merged into
  // another) is on the known list. Its neighbours need not run: the bug is charted already.
  bool resolved_known(const std::string& id) const;
  // Tentative findings still under analysis.
  bool pending(const std::string& failure) const;

 private:
  Finding* match(const FailureClass& f, const std::string& outcome, const Case& c);
  Finding* by_id(const std::string& id);
  Finding& create(const Sighting& s, const std::optional<FailureClass>& f, double at_s);
  void count(Finding& f, const Sighting& s, const std::optional<FailureClass>& fc);
  void write_dir(const Finding& f, const Sighting& s);
  void rename(Finding& f, const std::string& id);
  void mark_known(Finding& f);
  std::optional<FailureClass> failure_of(const Sighting& s) const;
  std::optional<AnalysisRequest> request_for(const Finding& f, const Sighting& s) const;

  std::filesystem::path dir_;
  CampaignState& st_;
  const KnownList& known_;
  bool cuda_;
  std::vector<Sighting> parked_;
  std::map<std::string, std::string> resolved_;  // tentative id -> the id it ended as
};

// A differential sighting's outcome line as findings and outcome counts key it:
// "regressed:<subject's>", "fixed:<baseline's>", "changed:<subject's>"; the subject's alone when
// there is no baseline. A case whose two sides agree is "same:<outcome>" (a bucket, no finding).
std::string differential_outcome(const std::string& subject, const std::string& baseline, Change* change);
// The failure class of an outcome line, a differential one ("regressed:judge:...") included; the
// class key then carries the change word ("regressed:out-of-bounds@eager").
std::optional<FailureClass> sighting_class(const std::string& outcome);

}  // namespace flce
