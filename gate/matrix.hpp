// flce matrix: the same cases across several torch installations (one venv each), every
// run in a worker process of that venv and judged here against flce's golden; one table
// case x torch version -> outcome (signature and first failing ladder stage), each cell
// also held against the corpus expectation for that torch.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "judge/differential.hpp"

namespace flce {

struct MatrixEnv {
  std::string label;   // e.g. the venv folder name
  std::string python;  // its interpreter
};

struct ExpectRule {
  std::string torch, device = "any", outcome;  // corpus/expectations.json "expect" entries
};

struct MatrixRow {
  std::string id;       // case file as named in the corpus, or the path given
  std::string subject;  // possibly "<name>+workaround"
  Case c;
  std::vector<ExpectRule> expect;
};

struct MatrixCell {
  std::string outcome;   // run_case's outcome line, "skipped", or "env-error"
  std::string expected;  // the rule that applies on this torch/device; empty: none
  std::string verdict;   // as-expected | fixed | regressed | changed | new | skipped
  std::optional<RunReport> rep;
  double wall_s = 0;
};

struct MatrixColumn {
  MatrixEnv env;
  Environment info;
  std::string error;  // the worker could not start
};

struct MatrixOptions {
  std::vector<MatrixEnv> envs;
  std::vector<MatrixRow> rows;
  int jobs = 2;  // environments run at once
  double timeout_s = 600;
  std::string subject_path;  // a source tree first on sys.path in every environment (--subject-path/--subject-git)
  std::function<void(const std::string&)> progress;
};

struct MatrixReport {
  std::vector<MatrixColumn> cols;  // sorted by torch version
  std::vector<MatrixRow> rows;
  std::vector<std::vector<MatrixCell>> cells;  // [row][col]
  double wall_s = 0;
};

std::vector<MatrixRow> matrix_rows_from_corpus(const std::string& expectations_file);
// Case files with the given subjects (none: model for flce cases, aten-dtype-out for op kinds).
std::vector<MatrixRow> matrix_rows_from_files(const std::vector<std::string>& files, const std::vector<std::string>& subjects);
// Adds "<subject>+workaround" after each row (no expectations: the corpus pins unfixed behaviour).
void add_workaround_rows(std::vector<MatrixRow>& rows);
// Every DIR/*/bin/python (e.g. .venvs/torch-2.8.0), by name.
std::vector<MatrixEnv> envs_from_dir(const std::string& dir);

// <0, 0, >0 like strcmp, on the numeric release ("2.8.0+cu128" < "2.13.0").
int compare_torch_versions(const std::string& a, const std::string& b);
// The expectation that applies to this torch/device ("" if none), and the replay-style verdict.
std::string expected_outcome(const std::vector<ExpectRule>& rules, const std::string& torch, bool cuda);
std::string expectation_verdict(const std::string& expected, const std::string& got);

MatrixReport run_matrix(const MatrixOptions& opt);
std::string matrix_text(const MatrixReport& r);
std::string matrix_markdown(const MatrixReport& r);  // through report/markdown.hpp
nlohmann::ordered_json matrix_json(const MatrixReport& r);

}  // namespace flce
