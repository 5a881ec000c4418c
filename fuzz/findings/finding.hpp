// A finding: one bug as a campaign sees it. Its key is its cause (findings/cause.hpp) once the
// ablation has run: the failure's class and the case's essential features; until then, or when
// the ablation could not run, the outcome line of its first case (the key before causes).
// A campaign's finding: one bug (its cause key), not one output's Flaw (judge/judge.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flce {

// How sure the finding is of its cause.
enum class CauseStatus : uint8_t {
  NONE,     // not ablatable (crash, timeout, flce's own error): keyed by its outcome line
  PENDING,  // the ablation is queued or running
  ABLATED,  // `cause` holds class + essential features
  NOT_RUN,  // the ablation could not run (`cause_note` says why): keyed by its outcome line
};
std::string_view name(CauseStatus s);
std::optional<CauseStatus> cause_status_named(std::string_view s);

// Marginal numeric findings (under 2x their bound) re-run on fresh seeds of their configuration.
struct Confirmation {
  int seeds = 0, exceed = 0;  // seeds run, and how many of them went out of bounds again
  double first_ratio = 0;     // the finding's own case: err / bound
  double max_ratio = 0;       // the worst over the fresh seeds
  bool ran() const { return seeds > 0; }
};

// A differential campaign (--baseline): how the subject's outcome differs from the baseline's.
enum class Change : uint8_t { NONE, REGRESSED, FIXED, CHANGED };
std::string_view name(Change c);

struct Finding {
  std::string id, signature;  // signature: the outcome line of the first case
  std::string first_case;  // case key: "corpus:<file>@<hash>", "sample:<seed>#<index>" or "sample:<seed>/eager#<index>"
  std::string first_seen, last_seen;  // ISO 8601 UTC
  double first_seen_s = 0;            // campaign clock (summed over resumed runs)
  int64_t count = 0;
  std::string detail;  // crash: the signal; timeout: the limit; else the oracle's message
  bool cuda_poisoned = false;
  // Shrinking after exploration (campaign_shrink.hpp): "" not tried yet; "minimized";
  // "smallest" (nothing smaller kept the signature); "budget" (partly shrunk when the
  // time ran out); "skipped: <why>"; "lost: <outcome>" (the case no longer shows it).
  std::string shrink;
  int shrink_runs = 0;
  int64_t elements = 0, min_elements = 0;  // input elements of case.json / minimized.json
  // repro.py run alone (--check-repros, script_check.hpp): "" not checked; "same" (it prints
  // REPRODUCED with this signature); "differs: <its last line>"; "not checked: <why>".
  std::string repro_alone;
  // Merged campaigns (flce campaign-merge) only: the shard that saw it first, and the shard
  // and case key its case.json came from (the smallest reproducer over all shards).
  std::string first_shard, case_from;

  // The cause (cause.hpp): "out-of-bounds@eager[softcap]", "tier1-decomposition@compiled[accum_dtype=fp32]".
  std::string lane;             // "eager" | "compiled": where it was found (and is analyzed and shrunk)
  std::string failure;          // the failure class the cause is of: "out-of-bounds@eager", a signature
  CauseStatus cause_status = CauseStatus::NONE;
  std::string cause;            // ABLATED: failure + essential features
  std::vector<std::string> essential, tested;  // features whose reset made it go away / all tried
  std::string cause_note;       // NOT_RUN: why; ABLATED: anything skipped
  int ablation_runs = 0;
  std::map<std::string, int64_t> outputs;  // every output out of line under this cause: cases
  double worst_ratio = 0;                  // numeric: err / bound of the first case (0: none)
  Confirmation confirm;
  // --known (known.hpp): what this finding matched ("" : new), e.g. "expectation cases/x.json".
  std::string known;
  // One root cause, one finding (root_cause.hpp): the id of the finding this one is a symptom or
  // an order-dependent variant of, and why; "" for a finding that stands for itself.
  std::string root, root_why;
  Change change = Change::NONE;  // --baseline: against the baseline's outcome
  std::string baseline_outcome;

  // The lane its analysis and shrink runs use: a failure of the eager run (or of a reference)
  // needs no compile, whichever lane found it; a compiled failure runs in the compiled lane.
  std::string work_lane() const;
  // News: neither known nor listed under another finding (whose standing it shares).
  bool is_new() const { return known.empty() && root.empty(); }
  // The finding's key: its cause once ablated, else its outcome line.
  const std::string& key() const { return cause_status == CauseStatus::ABLATED ? cause : signature; }
  nlohmann::ordered_json to_json() const;
  // Throws nlohmann's exceptions for a missing or mistyped field (the state's parser wraps them).
  static Finding from_json(const nlohmann::json& j);
};

// "pass", "unsupported" and "unsupported-by-subject:<param>..." are buckets, every other
// outcome is a finding.
bool is_finding(const std::string& outcome);
std::string utc_now();

}  // namespace flce
