// corpus/expectations.json, the pinned corpus: which case file, through which subject,
// should show which outcome on which torch and device. One parser for every reader
// (replay, gate, matrix); the file's format is corpus/README.md's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "case/case.hpp"
#include "case/sequence.hpp"

namespace flce {

struct Expectation {
  std::string torch;  // a version range (">=2.8,<2.13"); empty: any torch
  std::string device = "any";  // any | cpu | cuda
  // Text the subject's version string must contain ("liger-kernel 0.8.5", "liger-kernel git
  // ead96b618e5c"); empty: any version. One case can so pin a regression between releases.
  std::string subject_version;
  std::string outcome;  // one outcome line, or alternatives joined by kOutcomeSeparator (" | ")
  // The pinned bug's essential features (fuzz/findings/cause.hpp: "softcap", "reduction=none"),
  // when known: --known then files a campaign's finding of the outcome's class under this pin only
  // if the finding's cause carries all of them. Empty: any finding whose features the case carries.
  std::vector<std::string> cause;
};

struct PinnedCase {
  std::string case_file;  // relative to the expectations file's folder
  std::string subject, note;
  std::vector<Expectation> expect;
};

// Throws CaseError for text that is not such a file, naming `label` (the file), the entry and
// the field ("FILE: entry 3: subject: must be a non-empty string"; not JSON: with line and
// column); nothing else.
std::vector<PinnedCase> parse_expectations(std::string_view text, const std::string& label = "expectations");
// The file at `path`; CaseError also when it cannot be read.
std::vector<PinnedCase> read_expectations(const std::string& path);

// A pinned entry with its case (plain or sequence) read.
struct LoadedPin {
  PinnedCase pin;
  Sequence calls;
};
// read_expectations, then every case file it names (relative to the file's folder), so a
// broken corpus is refused whole before anything runs. CaseError names the case file.
// need_subject: every entry names its subject (replay, matrix); a gate's corpus may leave it to
// the gate's SPEC.
std::vector<LoadedPin> load_expectations(const std::string& path, bool need_subject = true);

// The first expectation that applies on this torch, device and subject version; nullptr if
// none. An expectation with a subject_version applies only when `subject_version` contains it
// (an unknown version, "", matches none of them).
const Expectation* expectation_here(const std::vector<Expectation>& expect, const std::string& torch_version, bool cuda,
                                    const std::string& subject_version = "");

}  // namespace flce
