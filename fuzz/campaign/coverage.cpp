#include "fuzz/campaign/coverage.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace flce {

namespace {
std::string on(bool b) { return b ? "on" : "off"; }
}  // namespace

std::vector<std::string> coverage_cells(const Case& c) {
  std::vector<std::string> v;
  v.push_back(fmt::format("kind={}", name(c.kind)));
  v.push_back(fmt::format("dtypes={}/{}", dtype_name(c.input_dtype), dtype_name(c.weight_dtype)));
  v.push_back(fmt::format("accum_dtype={}", c.accum_dtype ? dtype_name(*c.accum_dtype) : "none"));
  if (c.is_op()) {
    v.push_back("out_variant=" + on(c.out_variant));
  } else {
    v.push_back(fmt::format("reduction={}", name(c.reduction)));
    v.push_back("bias=" + on(c.bias));
    v.push_back("ce_weight=" + on(c.ce_weight));
    v.push_back("z_loss=" + on(c.return_z_loss));
    v.push_back("token_accuracy=" + on(c.return_token_accuracy));
    v.push_back("predicted_tokens=" + on(c.return_predicted_tokens));
    v.push_back("token_scaling=" + on(c.use_token_scaling));
    v.push_back("softcap=" + on(c.softcap.has_value()));
    v.push_back("label_smoothing=" + on(c.label_smoothing != 0));
    v.push_back("lse_square=" + on(c.lse_square_scale != 0));
    v.push_back(std::string("ignore=") + (c.ignore_fraction <= 0 ? "none" : c.ignore_fraction >= 1 ? "all" : "some"));
    std::string rg;
    for (auto [want, nm] : {std::pair{c.requires_grad.input, "input"}, std::pair{c.requires_grad.weight, "weight"},
                            std::pair{c.requires_grad.bias, "bias"}})
      if (want) rg += (rg.empty() ? "" : "+") + std::string(nm);
    v.push_back("requires_grad=" + (rg.empty() ? std::string("none") : rg));
    v.push_back(fmt::format("autocast={}", name(c.autocast)));
    v.push_back(fmt::format("regime={}", name(c.regime)));
    if (c.reduction == Reduction::NONE) v.push_back(fmt::format("token_grad={}", name(c.token_grad)));
  }
  v.push_back(fmt::format("backend={}", name(c.compile.backend)));
  v.push_back(std::string("dynamic=") + (c.compile.dynamic ? (*c.compile.dynamic ? "true" : "false") : "null"));
  v.push_back("fullgraph=" + on(c.compile.fullgraph));
  v.push_back(fmt::format("mode={}", name(c.compile.mode)));
  v.push_back(fmt::format("device={}", name(c.device)));
  return v;
}

const std::vector<std::string>& coverage_universe() {
  static const std::vector<std::string> u = [] {
    std::vector<std::string> v;
    for (Kind k : {Kind::FLCE, Kind::MM, Kind::ADDMM, Kind::BMM, Kind::BADDBMM}) v.push_back(fmt::format("kind={}", name(k)));
    for (DType a : {DType::BF16, DType::F16, DType::F32})
      for (DType b : {DType::BF16, DType::F16, DType::F32})
        v.push_back(fmt::format("dtypes={}/{}", dtype_name(a), dtype_name(b)));
    v.insert(v.end(), {"accum_dtype=none", "accum_dtype=fp32", "out_variant=on", "out_variant=off"});
    for (Reduction r : {Reduction::MEAN, Reduction::SUM, Reduction::NONE}) v.push_back(fmt::format("reduction={}", name(r)));
    for (const char* f : {"bias", "ce_weight", "z_loss", "token_accuracy", "predicted_tokens", "token_scaling", "softcap",
                          "label_smoothing", "lse_square"})
      for (const char* b : {"on", "off"}) v.push_back(fmt::format("{}={}", f, b));
    v.insert(v.end(), {"ignore=none", "ignore=some", "ignore=all"});
    for (const char* rg : {"input+weight+bias", "input+weight", "input+bias", "weight+bias", "input", "weight", "bias", "none"})
      v.push_back(fmt::format("requires_grad={}", rg));
    for (Autocast a : {Autocast::NONE, Autocast::F16, Autocast::BF16}) v.push_back(fmt::format("autocast={}", name(a)));
    for (Regime r : {Regime::NORMAL, Regime::LARGE_LOGITS, Regime::CONFIDENT, Regime::SPECIAL_VALUES, Regime::ONE_CLASS,
                     Regime::WEIGHT_SPREAD})
      v.push_back(fmt::format("regime={}", name(r)));
    for (TokenGrad g : {TokenGrad::ONES, TokenGrad::RANDOM, TokenGrad::LOG_SPREAD})
      v.push_back(fmt::format("token_grad={}", name(g)));
    for (Backend b : {Backend::EAGER, Backend::AOT_EAGER, Backend::AOT_EAGER_DECOMP_PARTITION, Backend::INDUCTOR})
      v.push_back(fmt::format("backend={}", name(b)));
    v.insert(v.end(), {"dynamic=null", "dynamic=true", "dynamic=false", "fullgraph=on", "fullgraph=off"});
    for (CompileMode m : {CompileMode::DEFAULT, CompileMode::REDUCE_OVERHEAD, CompileMode::MAX_AUTOTUNE,
                          CompileMode::MAX_AUTOTUNE_NO_CUDAGRAPHS})
      v.push_back(fmt::format("mode={}", name(m)));
    v.insert(v.end(), {"device=cpu", "device=cuda"});
    return v;
  }();
  return u;
}

void CoverageTable::add(const std::string& lane, const std::vector<std::string>& cells, bool finding) {
  auto& t = lanes[lane.empty() ? kDefaultLane : lane];
  for (auto& cell : cells) {
    auto& n = t[cell];
    ++n.cases;
    n.findings += finding;
  }
}

int64_t CoverageTable::cases(const std::string& cell) const {
  int64_t n = 0;
  for (auto& [lane, t] : lanes)
    if (auto it = t.find(cell); it != t.end()) n += it->second.cases;
  return n;
}

nlohmann::ordered_json CoverageTable::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto& [lane, t] : lanes)
    for (auto& [cell, n] : t) j[lane][cell] = {n.cases, n.findings};
  return j;
}

CoverageTable CoverageTable::from_json(const nlohmann::json& j) {
  CoverageTable t;
  if (!j.is_object()) return t;
  for (auto& [lane, cells] : j.items())
    for (auto& [cell, n] : cells.items())
      if (n.is_array() && n.size() == 2) t.lanes[lane][cell] = {n[0].get<int64_t>(), n[1].get<int64_t>()};
  return t;
}

void CoverageTable::merge(const CoverageTable& other) {
  for (auto& [lane, t] : other.lanes)
    for (auto& [cell, n] : t) {
      auto& m = lanes[lane][cell];
      m.cases += n.cases;
      m.findings += n.findings;
    }
}

namespace {
// The universe in order, then any other cell seen (a future field value).
std::vector<std::string> table_rows(const CoverageTable& t) {
  std::vector<std::string> rows = coverage_universe();
  for (auto& [lane, cells] : t.lanes)
    for (auto& [cell, n] : cells)
      if (std::find(rows.begin(), rows.end(), cell) == rows.end()) rows.push_back(cell);
  return rows;
}
std::vector<std::string> empty_cells(const CoverageTable& t) {
  std::vector<std::string> e;
  for (auto& cell : table_rows(t))
    if (t.cases(cell) == 0) e.push_back(cell);
  return e;
}
}  // namespace

Details coverage_details(const CoverageTable& t) {
  const auto rows = table_rows(t), empty = empty_cells(t);
  Details d;
  std::string names;
  for (auto& e : empty) names += (names.empty() ? "" : ", ") + e;
  d.summary = fmt::format("Coverage: {} of {} field values run{}", rows.size() - empty.size(), rows.size(),
                          empty.empty() ? "" : " (empty: " + names + ")");
  d.table.columns = {"field", "value"};
  std::vector<std::string> lanes;
  for (auto& [lane, cells] : t.lanes) lanes.push_back(lane);
  if (lanes.empty()) lanes.push_back(kDefaultLane);
  for (auto& l : lanes) {
    d.table.columns.push_back(l + " cases");
    d.table.columns.push_back(l + " findings");
  }
  for (auto& cell : rows) {
    const auto eq = cell.find('=');
    std::vector<std::string> r{cell.substr(0, eq), cell.substr(eq + 1)};
    for (auto& l : lanes) {
      CoverageCount n;
      if (auto it = t.lanes.find(l); it != t.lanes.end())
        if (auto c = it->second.find(cell); c != it->second.end()) n = c->second;
      r.push_back(std::to_string(n.cases));
      r.push_back(std::to_string(n.findings));
    }
    d.table.row(std::move(r));
  }
  return d;
}

nlohmann::ordered_json coverage_report_json(const CoverageTable& t) {
  const auto rows = table_rows(t), empty = empty_cells(t);
  return {{"cells_run", rows.size() - empty.size()}, {"cells_known", rows.size()}, {"empty", empty}, {"lanes", t.to_json()}};
}

}  // namespace flce
