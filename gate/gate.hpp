// flce gate: the same cases through a base and a candidate subject (each in its own worker
// process: one process holds one tree of a package), judged by flce's golden, and the two
// verdicts diffed case by case. A candidate failing where base passed, or failing
// differently, is a regression; the reverse is a fix; err/bound drift inside bounds is
// reported, never failing.
#pragma once
#include "judge/expectations.hpp"
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "judge/differential.hpp"
#include "oracles/subject_tree.hpp"

namespace flce {

// "subject=NAME[,path=SRC_TREE][,python=VENV_PYTHON][,git=CHECKOUT@REF]"
struct GateSpec {
  std::string text;  // as given
  std::string subject, path, python;
  std::string git_repo, git_ref;  // git=: REF's tree, exported into the cache (oracles/subject_tree.hpp)
};
GateSpec parse_gate_spec(const std::string& text);  // throws std::invalid_argument naming the key
std::string spec_text(const GateSpec& s);           // the SPEC again, keys in a fixed order

// `flce gate --merge-base BRANCH`: the base is the candidate's repository (its git=) at
// `git merge-base BRANCH <candidate REF>`. `base_text`: the --base SPEC given, without git=
// (empty: the candidate's SPEC). Throws std::invalid_argument for a SPEC that does not fit,
// SubjectTreeError when git cannot resolve it.
GateSpec merge_base_spec(const GateSpec& candidate, const std::string& branch, const std::string& base_text);

enum class GateVerdict {
  SAME_PASS,     // both pass
  SAME_FAILURE,  // both fail the same way
  UNSUPPORTED,   // neither could run it
  REGRESSED,     // base passed, candidate fails
  CHANGED,       // both fail, differently (a regression: a new failure mode)
  STILL_FAILING,  // both fail to compile, with different signatures (listed; a regression only with strict)
  LOST,          // candidate cannot run what base ran (a regression: coverage lost)
  NEW_FAILURE,   // base could not run it, candidate fails (a regression)
  FIXED,         // base failed, candidate passes
  NEW_PASS,      // base could not run it, candidate passes
  NEW_COVERAGE,  // base lacks a parameter the case uses (unsupported-by-subject), candidate runs it:
                 // listed with the candidate's outcome, never a regression
  SKIPPED,       // the case's kind does not fit one of the subjects, or it needs a device absent here
};
std::string_view name(GateVerdict v);
// strict_changes: a compile failure turned into another one is CHANGED, not STILL_FAILING.
// pinned: the outcome (or " | " alternatives) a corpus case's expectation pins for this torch;
// a failing base whose candidate shows a pinned failure (a known torch bug whose symptom varies
// from run to run) is STILL_FAILING, not CHANGED.
GateVerdict gate_verdict(const std::string& base_outcome, const std::string& candidate_outcome,
                         bool strict_changes = false, const std::string& pinned = "");
bool is_regression(GateVerdict v);

struct GateCase {
  std::string id;      // corpus case path, or "sample-<seed>-<k>"
  std::string source;  // corpus | sample | fuzz
  Case c;
  std::vector<Case> earlier;  // a sequence case's calls before c (case/sequence.hpp), run first
  // A corpus case's pinned expectations: a candidate that shows an outcome pinned for this
  // torch (a known torch bug whose symptom varies from run to run) is still failing, not changed.
  std::vector<Expectation> expect;
};

// err/bound of one output under both subjects (both passing).
struct Drift {
  std::string oracle, output;
  double base = 0, candidate = 0;
};

struct GateRow {
  GateCase gc;
  GateVerdict verdict = GateVerdict::SKIPPED;
  std::string skip_reason;
  std::optional<RunReport> base, candidate;
  std::vector<Drift> drift;  // every output judged on both sides (SAME_PASS only)
  double wall_s = 0;
};

// Regressions that share accum_dtype, failing oracle and both outcomes; what else varies
// among them (dtypes, backends) is collapsed into sets.
struct GateGroup {
  std::string accum, oracle, candidate_outcome, base_outcome;
  std::set<std::string> dtypes, backends;
  std::vector<size_t> rows;
  std::string title() const;  // "accum_dtype none, bf16/fp16/fp32, compiled[inductor]: new tier2-lowering@..."
};
std::vector<GateGroup> group_regressions(const std::vector<GateRow>& rows);
std::string dtype_label(const Case& c);  // "bf16", or "bf16 x fp32w" when weight differs

struct GateOptions {
  GateSpec base, candidate;
  std::vector<std::string> corpora;  // expectations.json files; none: no pinned cases
  int sample = 0;
  uint64_t seed = 1;
  double fuzz_minutes = 0;    // more sampled cases until this budget is spent
  bool vary_compile = false;  // sampled cases also vary dynamic/fullgraph
  bool cuda = false;          // sampled cases on the GPU (Liger's kernels need it)
  bool compiled = true;       // false (--lanes eager): golden + eager only, no torch.compile, no ladder
  double timeout_s = 600;     // per subject call
  double drift_report = 0.05;  // |Δ err/bound| worth listing
  // A case that failed to compile on base and still fails to compile on the candidate, with
  // another signature, is STILL_FAILING: not worse, so not a regression, unless strict.
  bool strict_changes = false;
  std::function<void(const std::string&)> progress;  // one line per case
};

struct GateReport {
  GateOptions opt;
  Environment base_env, candidate_env;
  std::string base_version, candidate_version;
  std::string base_commit, candidate_commit;  // git=: the commit each side ran
  // Each side's content identity (oracles/subject_identity.hpp): its tree, and the commit an
  // identity index or git= names; "builtin" for a side without a path.
  std::string base_identity, candidate_identity;
  std::vector<GateRow> rows;
  std::vector<GateGroup> groups;
  double wall_s = 0;
  int count(GateVerdict v) const;
  int regressions() const;
  int judged() const;  // rows not skipped
};

// Setup problems (bad spec, interpreter or subject that cannot load) throw GateSetupError.
struct GateSetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
GateReport run_gate(const GateOptions& opt);

// gate.md (the PR comment), gate.json, gate.xml (JUnit); Markdown and JUnit through report/.
std::string gate_markdown(const GateReport& r);
nlohmann::ordered_json gate_json(const GateReport& r);
std::string gate_junit(const GateReport& r);

}  // namespace flce
