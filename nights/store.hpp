// The findings store: what a nightly knows across nights, in one SQLite file. Each finding is
// kept by its cause key with its outcome line, the nights it was first and last seen, the subject
// identities it was seen on (oracles/subject_identity.hpp), its minimized case, and a triage
// state: new, triaged (an upstream link and an owner), wontfix (why), fixed (the night and the
// identity it first passed on). Every write is one SQLite transaction (BEGIN IMMEDIATE, a busy
// timeout for a second writer), so two shards recording at once and a writer killed half-way
// leave the file whole. A store belongs to one subject: opening it for another is refused.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace flce {

// Bad input: not a store, another subject's store, an unknown finding, a bad triage state. The
// message names the field and the rule.
struct StoreInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The file cannot be read or written (a disk error, a lock held past the busy timeout).
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class TriageState { NEW, TRIAGED, WONTFIX, FIXED };
std::string name(TriageState s);
// Throws StoreInputError naming --state and the allowed values.
TriageState triage_state_named(const std::string& s);

struct StoredFinding {
  std::string id, key, outcome, failure, cause_status, lane;
  std::vector<std::string> essential;
  std::string first_night, last_night;
  std::vector<std::string> identities;  // the identity texts it was seen on, in the order first seen
  int64_t hits = 0;
  nlohmann::json case_json;  // the minimized case (or the first case when none was shrunk)
  std::string case_file;     // where it came from: "minimized.json" or "case.json"
  std::string device, torch;  // of the last night it was seen
  TriageState state = TriageState::NEW;
  std::string link, owner, why;
  std::string fixed_night, fixed_identity;  // FIXED: the first night it passed, and on what
  std::string note;  // the last progression's word: "still fails", "changed: <outcome>", "regressed ..."
  // Other keys this finding showed as (fuzz/findings/root_cause.hpp): its symptoms and
  // order-dependent variants, filed under it, and known under it on later nights.
  struct Alias {
    std::string key, outcome, failure, cause_status, why;
    std::vector<std::string> essential;
  };
  std::vector<Alias> aliases;
  bool open() const { return state != TriageState::FIXED; }
};

// One night's word on one stored finding, from its re-run before exploring (progression.hpp).
struct ProgressionResult {
  std::string id, verdict, outcome;  // verdict: "still-open" | "fixed" | "changed" | "passes-alone"
};

// A finding the campaign reported tonight (its report.json entry, read by night.cpp).
struct SeenFinding {
  std::string id, key, outcome, failure, cause_status, lane, store_id;  // store_id: matched via the store's known list
  std::string known;  // what the campaign filed it under ("" new; a pin's or the store's source)
  std::string root, root_why;  // listed under another finding of tonight's (its campaign id), and why
  std::vector<std::string> essential;
  int64_t hits = 0;
  nlohmann::json case_json;
  std::string case_file, device;
};

struct NightRecord {
  std::string night, identity_key, identity_text, dir, torch;
  std::vector<ProgressionResult> progression;
  std::vector<SeenFinding> seen;
};

// What recording a night did to each finding: "new", "regressed", "seen" (in the store, seen
// again), "known" (new to the store, but known to another list: a corpus pin); a finding listed
// under a root is recorded as a sighting of its root ("symptom"), its key an alias of the root's.
struct RecordOutcome {
  std::vector<std::pair<std::string, std::string>> findings;  // (store id, what)
};

class Store {
 public:
  // Opens (creating, with `create`) the store at `path` for `subject` ("" : whichever it holds).
  // Throws StoreInputError for a file that is not a store or a store of another subject.
  static Store open(const std::string& path, const std::string& subject, bool create);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  const std::string& subject() const { return subject_; }
  const std::string& path() const { return path_; }
  std::vector<StoredFinding> findings() const;
  // By id or a unique prefix of one. Throws StoreInputError naming FINDING when none or several match.
  StoredFinding get(const std::string& id_or_prefix) const;
  // Sets a triage state. TRIAGED needs link and owner; WONTFIX needs why; FIXED takes `night`
  // (default: the last night recorded). Throws StoreInputError naming the field.
  void triage(const std::string& id_or_prefix, TriageState state, const std::string& link, const std::string& owner,
              const std::string& why, const std::string& night);
  // One night, in one transaction: progression verdicts, then the findings seen.
  RecordOutcome record(const NightRecord& night);
  // Nights recorded, in order: {night, identity, dir, at}.
  nlohmann::json nights() const;

 private:
  struct Db;
  std::unique_ptr<Db> db_;
  std::string path_, subject_;
  Store() = default;
};

}  // namespace flce
