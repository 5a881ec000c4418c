// Known vs new (`flce campaign --known FILE_OR_DIR`): what a nightly already knows, so tonight's
// report leads with what is new. A known list is the pinned corpus (corpus/expectations.json:
// the entries for this subject whose expectation applies on this torch, device and subject
// version) or an earlier campaign's findings (its directory or report.json).
//
// A finding matches an expectation when its failure class is the class of the expected outcome
// and every essential feature of its cause is a feature of the pinned case (the pinned case is
// one instance of the cause); a finding whose cause could not be ablated matches on its exact
// outcome line. It matches an earlier campaign's finding on the cause key (or, unablated on
// either side, the outcome line).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/findings/cause.hpp"
#include "fuzz/findings/finding.hpp"

namespace flce {

struct KnownEntry {
  std::string source;  // "corpus/expectations.json: cases/x.json (torch >=2.11,<2.12, cuda)", "campaign D: <id>"
  // Expectations: the outcome's class and the pinned case's features, per alternative outcome.
  std::string outcome;
  std::optional<FailureClass> failure;
  std::vector<std::string> features;
  std::vector<std::string> pin_cause;  // the expectation's `cause`: the pinned bug's essential features
  // The outcome is a typed trace-time signature (judge/signatures.json, not a catch-all): the
  // signature itself names the bug (a torch one, say), so a pin without a cause takes any cause.
  bool typed_signature = false;
  // Earlier findings: their cause key ("" when not ablated) and outcome line; an ablated one's
  // failure class and essential features (a narrower view of it is the same bug).
  std::string cause;
  std::string cause_failure;
  std::vector<std::string> cause_essential;
  bool from_expectation = false;
  // The expectation's own conditions, checked when a finding is matched (the subject version is
  // a finding's): torch range, device, subject version text; empty: any.
  std::string torch, device, subject_version;
};

struct KnownList {
  std::vector<KnownEntry> entries;
  std::vector<std::string> sources;  // what was loaded, for the report
  bool empty() const { return entries.empty(); }
};

// Bad --known input: a path that cannot be read, a file that is neither an expectations file nor
// a campaign report, a broken corpus entry. what() names the path and the rule.
struct KnownInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `subject`: the campaign's (expectations of other subjects are not loaded). Throws KnownInputError.
KnownList load_known(const std::vector<std::string>& paths, const std::string& subject);

// Where a finding stands against the list: the entry it matches, else nullptr. `torch`, `cuda` and
// `subject_version` describe where the finding was made (expectations apply per torch and version).
const KnownEntry* match_known(const KnownList& known, const Finding& f, const std::string& torch, bool cuda,
                              const std::string& subject_version);

// The stage the list gives a trace-time signature ("<signature>@compiled:<stage>" of an entry
// that applies here), if any: a compiled case whose ladder walk waits off the lane reports that
// stage rather than its own backend's, so the known bug keeps its one name (on the H200 the
// seed's tier 1 showed as a new `@compiled:inductor` finding beside the known `:eager` one).
std::optional<std::pair<std::string, std::string>> known_stage(const KnownList& known, const std::string& signature,
                                                               const std::string& torch, bool cuda,
                                                               const std::string& subject_version);

}  // namespace flce
