// Re-running a finding: where its expected outcome comes from, whether an outcome
// reproduces it, and pinning a (minimized) finding into the corpus.
#pragma once
#include <string>
#include <vector>

#include "case/case.hpp"
#include "repro/emit_python.hpp"

namespace flce {

// Expected outcomes for a case file and subject, first source that has one:
//   1. a sibling report.json (a campaign finding): "expectation" (string or {"outcome"}),
//      else "outcome"; ignored when its "subject" names another subject;
//   2. a sibling file named "expectation": its first line;
//   3. the corpus: <dir>/../expectations.json when the case lies in a cases/ folder, the
//      entry for this file and subject (every torch/device range it lists).
// Empty when none applies. `from` says which source answered.
std::vector<ExpectedOutcome> find_expectations(const std::string& case_path, const std::string& subject,
                                               std::string* from);

// The outcome expected on this torch and device (first matching entry); "" if none.
std::string expected_here(const std::vector<ExpectedOutcome>& expect, const std::string& torch_version, bool cuda);

// Does `got` reproduce `expected`? An empty expectation asks for any failure. A compile failure
// reproduces at any stage (same_failure): the stage names the first rung of the backend ladder that
// showed it, and a campaign may have named it from a walk on another graph configuration (its
// signature's shared walk), where a script's own walk of the case names an earlier rung.
bool reproduces(const std::string& got, const std::string& expected);
// When `got` reproduces `expected` only as the same compile failure at another stage: the
// alternative it matched ("sig@compiled:inductor"), for a note; else "".
std::string restaged(const std::string& got, const std::string& expected);

// ">=2.13,<2.14" for "2.13.0+cu130": the torch minor release a finding was observed on.
std::string torch_minor_range(const std::string& torch_version);

// Pin a case into a corpus directory: writes <corpus>/cases/<name>.json (canonical form)
// and appends one entry line to <corpus>/expectations.json, atomically (temp file +
// rename) under an exclusive lock on the corpus directory. Throws CaseError("pin", ...)
// for a bad name or an existing case/entry; std::runtime_error for I/O failures.
struct PinEntry {
  std::string name, subject, note;
  ExpectedOutcome expect;
};
std::string pin_case(const std::string& corpus_dir, const Case& c, const PinEntry& e);  // returns the case path

// An expectations.json entry as one line, in the file's "key": value, spacing.
std::string expectation_line(const PinEntry& e);

}  // namespace flce
