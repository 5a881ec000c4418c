// Which code a finding's report is about, for `flce report` (upstream_report.hpp): the
// subject's source named as a user would (an installed release, or the git commit of the tree
// that ran, with the repository and ref when the run recorded them), and what `flce bisect
// --out DIR` found for it (DIR/bisect.json: the first bad commit, the range, the steps, and
// the caveat when the good end did not pass).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "report/document.hpp"

namespace flce {

struct FindingFiles;

// j[key] when j is an object holding a string there, else "" (a finding file's optional fields;
// upstream_report.cpp reads them the same way).
std::string json_str(const nlohmann::json& j, const char* key);

struct SubjectSource {
  // Inline Markdown: "liger-kernel git `ead96b618e5c` (main), a tree exported from `REPO@main`",
  // or the subject's own version string ("liger-kernel 0.8.5, installed release (...)").
  std::string text;
  std::string commit;  // 40 hex when the tree of a git commit ran
  bool tree = false;   // a source tree ran: an installed copy in the environment is another one
};
SubjectSource subject_source(const FindingFiles& f);

// A `flce bisect` result next to the finding (<dir>/bisect.json, <dir>/bisect/bisect.json), or
// in `given` (--bisect DIR). Null when none is found; with `given`, throws FindingInputError
// naming --bisect when it is not a directory or holds no bisect result.
nlohmann::json read_bisect(const std::filesystem::path& dir, const std::filesystem::path& given,
                           std::filesystem::path& found_at);

// The report's "Bisect" section (nothing when no bisect result was found).
void bisect_section(Markdown& md, const FindingFiles& f);

}  // namespace flce
