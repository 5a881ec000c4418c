// The differential loop for one case: golden (fp64, the judge), then the subject
// eager and compiled, each judged; a compiled failure is walked down the backend
// ladder to the first stage that breaks; errors become typed signatures.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "judge/blame.hpp"
#include "judge/bounds.hpp"
#include "judge/judge.hpp"
#include "judge/signature.hpp"
#include "oracles/subject.hpp"

namespace flce {

struct RunOptions {
  std::string subject = "model";
  std::string subject_path;
  bool eager = true, compiled = true;
  bool ladder = true;  // walk the backend ladder when compiled fails or diverges
  SubjectRunner* runner = nullptr;  // null: default_subject_worker()
  // Further oracles judged next to eager/compiled (e.g. "reference-cuda"): name -> outputs,
  // or nullopt when it cannot run here.
  std::vector<std::pair<std::string, std::function<std::optional<Outputs>(const Case&)>>> extra_oracles;
  // Called as each step starts ("golden", "eager", "compiled:<backend>", "ladder:<backend>"), so a
  // supervising process can name the step a worker died or hung in (flce campaign).
  std::function<void(const std::string& stage)> on_stage;
  // Campaign workers: a compiled run that raised the same signature for the same graph and
  // shape as an earlier case in this process reuses that case's ladder instead of walking
  // it again (trace-time errors do not depend on the values fed). Null: always walk it.
  struct LadderMemo* ladder_memo = nullptr;
  // A subject process that died ends the case there, instead of restarting the interpreter
  // for the next oracle: the campaign wants one crash per case, fast.
  bool stop_when_subject_dies = false;
  // Campaign workers: asked before a ladder walk that no memo answers, with the compiled run's
  // signature id and whether it is a known one. The answer is either "walk it" (nullopt) or the
  // ladder another worker walked meanwhile (the campaign makes one worker walk and the others
  // wait for its ladder: once per known signature, once per graph for the rest).
  std::function<std::optional<struct LadderMemoEntry>(const std::string& signature, bool known)> ladder_gate;
};

// One oracle's outcome: ran and was judged, raised, or could not run here.
struct OracleOutcome {
  std::string oracle;       // eager | compiled | compiled[aot_eager] ...
  std::string backend;      // for compiled
  SubjectStatus status = SubjectStatus::ERROR;
  std::optional<OracleVerdict> verdict;  // when status ok
  std::optional<Signature> signature;    // when status error
  std::string reason, phase;
  std::vector<std::string> unsupported_params;  // unsupported: what the case uses that the subject lacks
  std::vector<std::string> paths;
  double wall_ms = 0;
  double transfer_ms = 0;  // inputs to and outputs from the subject host (shared memory)
  double vs_eager = -1;  // compiled: max |compiled - eager| / bound (-1: not compared)
  bool pass() const { return status == SubjectStatus::OK && verdict && verdict->pass(); }
};

struct LadderStep {
  std::string backend;
  bool pass = false;
  std::string what;  // "ok", signature id, or the failing output
};

// Ladders already walked, by graph configuration and failure: key(c, signature) is
// graph_key(c) + "|" + the compiled run's signature id. A trace-time error that one graph
// raises for one shape it raises for the family's other shapes too (the shape is fed, not
// traced into the key), so a campaign shares these across workers (fuzz/campaign/lanes.hpp).
struct LadderMemoEntry {
  std::vector<LadderStep> ladder;
  std::string first_failing_stage;
  // A gate's answer "walk it later, elsewhere" (a campaign's deferred walk): the case records
  // its compiled run's own rung and goes on; no memo is kept.
  bool deferred = false;
};

struct LadderMemo {
  using Entry = LadderMemoEntry;
  std::map<std::string, Entry> entries;
  int64_t hits = 0;
  static std::string key(const Case& c, const std::string& signature);
  // A known signature's entry, for every graph: "*|<signature>".
  static std::string any_graph(const std::string& signature);
};


// Where one case's time went, in ms of this process's clock: flce's own steps (inputs, golden,
// judge: bounds, verdicts, signatures) and each oracle's round trip to where it runs (eager,
// compiled, ladder rungs: the subject host; reference: the extra oracles). transfer_ms is the
// part of the subject round trips spent moving tensors through shared memory. A campaign sums
// these per lane (fuzz/campaign/lanes.hpp).
struct RunTiming {
  double inputs_ms = 0, golden_ms = 0, judge_ms = 0;
  double eager_ms = 0, compile_ms = 0, ladder_ms = 0, reference_ms = 0;
  double transfer_ms = 0;
  int compiled_runs = 0;  // subject calls in compiled mode: the compiled run and each ladder rung run
};

struct RunReport {
  Case c;
  std::string subject, subject_version;
  Environment env;
  Outputs golden;
  std::vector<OracleOutcome> oracles;
  std::vector<LadderStep> ladder;
  std::string first_failing_stage;  // empty when nothing failed or the ladder did not run
  bool ladder_memoized = false;     // the ladder is an earlier case's (RunOptions::ladder_memo)
  bool ladder_deferred = false;     // not walked here: the campaign walks it after the verdict
  // The failure the ladder was walked for, as LadderMemo keys it (the compiled run's signature
  // id, or "judge:<output>:<finding>" for wrong values); empty when the compiled run passed. A
  // campaign shares ladders by it.
  std::string ladder_signature;
  RunTiming timing;
  std::string subject_died;         // "<how>@<stage>" when the subject's process died
  // Per out-of-bounds output: its error next to the other side's, and the side out of line
  // (eager vs reference-cuda, compiled vs eager; blame.hpp).
  std::vector<Blame> blames;
  // The one line that identifies what this case shows (for dedup, gating, repro):
  // "pass", "unsupported" (cannot run here: no CUDA, no kernel on this device),
  // "unsupported-by-subject:<param>[+<param>...]" (the case uses a parameter the subject's
  // callable lacks, e.g. return_token_accuracy on a Liger tree older than it: never a finding),
  // "<signature id>@<stage>", "judge:<oracle>:<output>:<finding>",
  // "crash:<how>@<stage>" (the subject's process died; as a campaign names a dead worker).
  std::string outcome;
  bool all_pass() const;
  bool unsupported() const;
};

RunReport run_case(const Case& c, const RunOptions& opt);
std::string report_table(const RunReport& r);
nlohmann::ordered_json report_json(const RunReport& r);

}  // namespace flce
