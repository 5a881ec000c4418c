// flce bisect: the first commit of a subject's repository at which one case's outcome turns
// into the bad one. Each tested commit's tree is exported into the tree cache
// (oracles/subject_tree.hpp) and run in a subject host of its own (a fresh SubjectWorker:
// one process cannot load two trees of a package), judged by flce's golden as `flce run`
// would.
//
// Order: the commits of `git rev-list --ancestry-path --topo-order --reverse GOOD..BAD`,
// i.e. the descendants of GOOD that are ancestors of BAD, oldest first, bisected as one
// sequence. On a linear history that is exact. Through merges, the topological order puts
// each side branch's commits in a run of their own; the commit found is then the first one,
// in that order, whose tested predecessors are good: every commit of the range can be
// named (a bug brought in on a side branch is found on it, not at the merge, unlike
// --first-parent), at the price that a commit on another branch may sit between it and its
// real parent.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "case/case.hpp"
#include "report/document.hpp"

namespace flce {

// ---------------------------------------------------------------- stepping (pure)

enum class BisectMark { GOOD, BAD, SKIP };
std::string_view name(BisectMark m);

// n candidates in order, oldest first; the last one (index n-1) is the bad end, already
// known bad; the good end lies before index 0. Like `git bisect skip`, a skipped commit is
// stepped around, and when only skipped commits are left between the last good and the
// first bad one, the answer is the range of suspects.
class Bisection {
 public:
  explicit Bisection(size_t n);
  // The untested candidate nearest the middle of what is still open (the lower one on a
  // tie); nullopt when nothing is left to test.
  std::optional<size_t> next() const;
  void mark(size_t i, BisectMark m);
  bool done() const { return !next().has_value(); }
  bool found() const { return done() && hi_ == lo_ + 1; }  // first_bad() is then the answer
  long last_good() const { return lo_; }                    // -1: the good end
  size_t first_bad() const { return static_cast<size_t>(hi_); }
  // Every candidate that may be the first bad one: the skipped ones after last_good() and
  // first_bad() itself, oldest first (one element when found()).
  std::vector<size_t> suspects() const;
  const std::vector<std::optional<BisectMark>>& marks() const { return marks_; }

 private:
  long lo_ = -1, hi_;
  std::vector<std::optional<BisectMark>> marks_;
};

// What one outcome line says about its commit: BAD when it is the bad outcome; SKIP when
// the subject could not run the case there ("unsupported", "unsupported-by-subject:..."),
// GOOD otherwise (another failure is not the bad one yet).
BisectMark bisect_mark(const std::string& outcome, const std::string& bad_outcome);

// ---------------------------------------------------------------- the run

struct BisectOptions {
  std::string repo, good, bad;  // refs as given
  std::string case_file;
  Case c;
  std::string subject;
  std::string subject_path;  // inside the tree; empty: its src/ or root
  std::string python;        // interpreter of the subject hosts; empty: default_python()
  std::string expect;        // the bad outcome; empty: the outcome at --bad
  // What the good end must show (--expect-good, e.g. "pass"); empty: anything but the bad
  // outcome. A good end that fails another way makes the answer the commit where one failure
  // turned into another, not where a passing case broke.
  std::string expect_good;
  bool eager = true, compiled = true, ladder = true;
  double timeout_s = 600;  // per subject call
  std::string cache;       // tree cache; empty: tree_cache_dir()
  std::function<void(const std::string&)> progress;  // one line per step
};

struct BisectStep {
  std::string role;  // "bad end" | "good end" | "step"
  std::string commit, subject_line;
  std::string outcome;  // empty when it could not run at all
  BisectMark mark = BisectMark::SKIP;
  std::string why;  // a skip: why that commit cannot run
  std::string subject_version;
  double wall_s = 0;
};

enum class BisectStatus { FOUND, NOT_FOUND, AMBIGUOUS };
std::string_view name(BisectStatus s);

struct BisectReport {
  BisectOptions opt;
  std::string good_commit, bad_commit;
  std::string bad_outcome, bad_outcome_from;  // "--expect" | "the outcome at --bad"
  std::vector<std::string> range;             // candidates, oldest first; the last is the bad end
  std::vector<BisectStep> steps;
  BisectStatus status = BisectStatus::NOT_FOUND;
  std::string message;  // NOT_FOUND: why; AMBIGUOUS: what is in the way
  std::string first_bad, first_bad_subject;  // FOUND
  std::string good_outcome;  // the good end's outcome ("" when it did not run)
  // FOUND: the commit before first_bad in the order (the good end when it is the first
  // candidate) and its outcome: what the bad outcome turned from.
  std::string last_good, last_good_outcome;
  // Set when the good end does not pass (and the bad outcome is not "pass"): says so, and
  // what the commit found therefore is. Printed, in bisect.md and bisect.json.
  std::string note;
  std::vector<std::pair<std::string, std::string>> suspects;  // AMBIGUOUS: (commit, subject)
  double wall_s = 0;
  std::vector<const BisectStep*> skipped() const;
};

// Bad input (an unknown repository or ref, GOOD not an ancestor of BAD, an interpreter that
// cannot start, a case kind the subject has no function for): exit 2.
struct BisectInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One commit, tested: export its tree, start a subject host, run the case; fills commit,
// outcome, subject_version and, when the commit cannot run the case at all (export failed,
// the subject does not import there), why. run_bisect sets role, subject line and mark.
// Replaceable so the stepping can be tested without Python.
using BisectEvaluator = std::function<BisectStep(const std::string& commit)>;
BisectEvaluator subject_evaluator(const BisectOptions& opt);

BisectReport run_bisect(const BisectOptions& opt, BisectEvaluator evaluate = nullptr);

// bisect.md and bisect.json (report/: Markdown blocks and the JSON payload).
Report bisect_report(const BisectReport& r);
nlohmann::ordered_json bisect_json(const BisectReport& r);

}  // namespace flce
