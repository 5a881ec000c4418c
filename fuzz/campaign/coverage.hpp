// Coverage of a campaign: which values of each case field it has run, and the findings among
// them. A cell is "field=value" (coverage_cells); the table counts cases and finding cases per
// cell and per lane (the worker's `lane` string, "compiled" when a result names none), so tables
// of shards or lanes merge by adding counts. The counts live in state.json (CampaignState).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "case/case.hpp"
#include "report/document.hpp"

namespace flce {

inline constexpr const char* kDefaultLane = "compiled";

// The cells a case covers, one per field it uses: "kind=flce", "dtypes=bf16/fp32",
// "accum_dtype=none", "reduction=none", "bias=on", ..., "ignore=some", "requires_grad=input+weight",
// "regime=confident", "token_grad=log_spread" (reduction none only), "backend=inductor",
// "dynamic=null", "fullgraph=off", "mode=default", "device=cpu". Op kinds: kind, dtypes,
// accum_dtype, out_variant, compile and device only (the CE fields mean nothing there).
std::vector<std::string> coverage_cells(const Case& c);

// Every cell a case can cover, in table order (the report lists the empty ones too).
const std::vector<std::string>& coverage_universe();

struct CoverageCount {
  int64_t cases = 0, findings = 0;  // findings: cases in the cell whose outcome is a finding
};

struct CoverageTable {
  std::map<std::string, std::map<std::string, CoverageCount>> lanes;  // lane -> cell -> counts

  void add(const std::string& lane, const std::vector<std::string>& cells, bool finding);
  // Cases in the cell over all lanes (what the sampler's guidance reads).
  int64_t cases(const std::string& cell) const;
  // {"compiled": {"reduction=none": [cases, findings], ...}, ...}
  nlohmann::ordered_json to_json() const;
  static CoverageTable from_json(const nlohmann::json& j);
  void merge(const CoverageTable& other);  // adds counts (campaign-merge, lanes)
};

// report.md's coverage block: "Coverage: N of M field values run (empty: ...)" over a table of
// every cell of coverage_universe() (and any other seen), cases and findings per lane.
Details coverage_details(const CoverageTable& t);
// report.json's: {"cells_run", "cells_known", "empty": [...], "lanes": to_json()}.
nlohmann::ordered_json coverage_report_json(const CoverageTable& t);

}  // namespace flce
