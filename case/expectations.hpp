// The pinned corpus's expectations file (corpus/expectations.json): one entry per pinned
// case, {case, subject, expect: [{torch?, device?, outcome}]}, the case path relative to the
// file. One reader for replay, gate and matrix, so each refuses a broken file the same way
// and before anything runs.
#pragma once
#include <string>
#include <vector>

#include "case/case.hpp"

namespace flce {

struct PinnedExpectation {
  std::string torch;   // a version range ("" any), judge/signature.hpp's version_in_range
  std::string device;  // "any", "cpu" or "cuda"
  std::string outcome;
};

struct PinnedCase {
  std::string file;  // as written in the entry (relative to the expectations file's directory)
  std::string subject;
  Case c;
  std::vector<PinnedExpectation> expect;
};

// Reads and checks the whole file, every case included. Throws CaseError naming the file,
// the entry and the field ("corpus/expectations.json: entry 3: subject: must be a non-empty
// string"), a JSON error with its line and column, or a case file's own broken rule.
std::vector<PinnedCase> load_expectations(const std::string& file);

}  // namespace flce
