// `flce conformance`: the cross-implementation table. One campaign per subject, same seed (same
// case keys, same inputs where the contracts leave a case alone), each judged by its own
// contract; this builds the table from those campaign directories (report.json, cases.jsonl).
//
// Rows are the coverage table's field values (coverage.hpp) and the lane (eager: golden and the
// subject eager; compiled: torch.compile too), columns the subjects. A cell is:
//   pass            every case of the subject carrying the value passed ("pass (n cases)")
//   finding         some did: the finding ids with their case counts (and the passes)
//   unsupported     the subject's contract (params, dtypes) or capabilities exclude the value, or
//                   its supports() refused every such case ("unsupported (why)")
//   approximation   passes of a subject whose contract declares an approximation tolerance
//   not_sampled     the subject ran no case with the value
//   not_run         the subject's campaign wrote no table (its exit status and why)
// Implementation vs implementation: for each pair, the keys both ran on identical inputs; a
// scalar loss pair differs when |a - b| > bound_a + bound_b (each the bound its own verdict
// used), or when one is finite and the other not; an outcome pair differs when one passed and
// the other is a finding.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace flce {

struct ConformanceColumn {
  std::string subject;
  std::filesystem::path dir;  // its campaign directory
  int exit_status = 0;        // the campaign's (0, 1: it ran; else not_run)
  std::string why;            // when it did not run: the tail of its stderr
};

// The table (schema "flce-conformance/1"): {"schema", "seed", "subjects": [...], "rows": [{"cell",
// "field", "value", "cells": {subject: {"kind", "text", "cases", "findings": {id: n}, "why"}}}],
// "comparisons": [...]}. Reads each column's directory; a missing or partial one is not_run.
nlohmann::ordered_json conformance_table(const std::vector<ConformanceColumn>& columns, uint64_t seed);

// report.md: the table, what was compared and with which bound, and the disagreements.
std::string conformance_markdown(const nlohmann::ordered_json& table);

}  // namespace flce
