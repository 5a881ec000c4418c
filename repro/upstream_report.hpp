// `flce report FINDING_DIR`: a finding written up as an upstream-ready issue body (Markdown):
// a title from the outcome signature, the guilty side and the case; the environment it was
// seen in; the standalone repro.py inline; observed vs expected (fp64 values, error, bound,
// ratio at the worst element; or the exception's key message); the backend ladder; the torch
// releases it reproduces on (a `flce matrix` result); the first bad commit (a `flce bisect`
// result); the dedup key; the known upstream issue (judge/signatures.json); the shrink and
// flce's own version.
//
// A finding directory is what `flce campaign` writes per finding (<out>/findings/<id>/:
// case.json, report.json, finding.json, minimized.json, repro.py, cuda_fault.{json,txt}), or
// any folder holding a case file with a report.json (`flce run --json`) and/or a repro.py
// (`flce repro --emit-python -o`, `flce minimize --out`), or a bare case file.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "judge/signature.hpp"
#include "report/document.hpp"

namespace flce {

// Not a finding: names the path and what is missing. `flce report` exits 2 on it.
struct FindingInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FindingFiles {
  std::filesystem::path dir;
  std::filesystem::path case_path, minimized_path, repro_path, matrix_path;
  nlohmann::json case_json, minimized_json;  // minimized: null when not shrunk
  nlohmann::json report;      // report.json (the RunReport of case.json); null when none
  nlohmann::json minimized_report;  // minimized_report.json (of minimized.json); null when none
  nlohmann::json finding;     // finding.json (campaign); null when none
  nlohmann::json campaign;    // the campaign's state.json two levels up; null when none
  nlohmann::json matrix;      // a `flce matrix` matrix.json; null when none
  nlohmann::json bisect;      // a `flce bisect` bisect.json (upstream_provenance.hpp); null when none
  std::filesystem::path bisect_path;
  nlohmann::json cuda_fault;  // cuda_fault.json; null when none
  std::string repro_py;       // repro.py's text; "" when none
  nlohmann::json script_check;  // repro.check.json (`flce repro --check`) of this repro.py; null when none
  std::string outcome() const;  // the finding's signature, else the report's outcome
  std::string subject() const;
};

// Reads a finding directory or a case file. `matrix` (optional) overrides the search for a
// matrix.json next to the finding (<dir>/matrix.json, <dir>/matrix/matrix.json, the campaign's
// <out>/matrix.json); `bisect` (optional, --bisect DIR) the search for a bisect.json (<dir>/,
// <dir>/bisect/). Throws FindingInputError when `path` holds no case, or a given one is not
// what it should be.
FindingFiles load_finding(const std::filesystem::path& path, const std::filesystem::path& matrix = {},
                          const std::filesystem::path& bisect = {});

// The one-line title.
std::string upstream_title(const FindingFiles& f, const SignatureTable& table);

// The issue body. `flce_version`: "flce 0.x (git abc)" of the binary writing it.
Markdown upstream_report(const FindingFiles& f, const SignatureTable& table, const std::string& flce_version);

}  // namespace flce
