#include "fuzz/campaign/conformance.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fuzz/campaign/coverage.hpp"
#include "fuzz/findings/finding.hpp"

namespace flce {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

struct Line {  // one case of a campaign's cases.jsonl
  std::string outcome, finding, input;
  json loss;
  bool approximated = false;
};

struct Stat {
  int64_t cases = 0, pass = 0, approx = 0;  // approx: passes that needed the declared approximation
  std::map<std::string, int64_t> findings, unsupported, other;
};

struct Column {
  const ConformanceColumn* in = nullptr;
  bool ran = false;
  std::string why;
  json caps, report;
  std::map<std::string, Line> keys;
  std::map<std::string, Stat> cells;
};

std::string join(const json& a, const char* sep = ", ") {
  std::string s;
  for (auto& x : a) s += (s.empty() ? "" : sep) + (x.is_string() ? x.get<std::string>() : x.dump());
  return s;
}

Column load(const ConformanceColumn& c) {
  Column col;
  col.in = &c;
  if (c.exit_status != 0 && c.exit_status != 1) {
    col.why = fmt::format("campaign exit {}{}{}", c.exit_status, c.why.empty() ? "" : ": ", c.why);
    return col;
  }
  std::ifstream rf(c.dir / "report.json");
  col.report = rf ? json::parse(rf, nullptr, false) : json();
  if (!col.report.is_object()) {
    col.why = "no report.json in " + c.dir.string();
    return col;
  }
  col.ran = true;
  col.caps = col.report.value("capabilities", json::object());
  // A case's finding, by its outcome (the signature): the journal's id may be a pending one.
  std::map<std::string, std::string> by_signature;
  for (auto& f : col.report.value("findings", json::array())) {
    std::string& ids = by_signature[f.value("signature", "")];
    // A finding the campaign's --known list explains (a pinned, reported bug) says so in its cell.
    ids += (ids.empty() ? "" : " / ") + f.value("id", "") + (f.value("new", true) ? "" : " [known]");
  }
  std::ifstream jf(c.dir / "cases.jsonl");
  for (std::string s; std::getline(jf, s);) {
    json j = json::parse(s, nullptr, false);
    if (!j.is_object() || !j.contains("key")) continue;
    Line l{j.value("outcome", ""), j.value("finding", ""), j.value("input", ""), j.value("loss", json()),
           j.contains("approximated")};
    json cells = j.value("cells", json::array());
    cells.push_back("lane=" + j.value("lane", std::string(kDefaultLane)));  // eager or compiled: which oracles ran
    for (auto& cell : cells) {
      Stat& st = col.cells[cell.get<std::string>()];
      ++st.cases;
      if (l.outcome == "pass") ++st.pass, st.approx += l.approximated;
      else if (l.outcome.rfind("unsupported-by-subject:", 0) == 0) ++st.unsupported[l.outcome.substr(23)];
      else if (l.outcome == "unsupported") ++st.unsupported["its supports() refused the case"];
      else if (is_finding(l.outcome))
        ++st.findings[by_signature.count(l.outcome) ? by_signature[l.outcome]
                      : l.finding.empty()            ? l.outcome
                                                     : l.finding];
      else ++st.other[l.outcome];
    }
    col.keys[j["key"].get<std::string>()] = std::move(l);
  }
  return col;
}

// The subject's parameter behind a field value it may lack ("" when none).
std::string param_of(const std::string& field, const std::string& value) {
  static const std::map<std::string, std::string> flags = {
      {"bias", "bias"},           {"ce_weight", "ce_weight"},
      {"z_loss", "return_z_loss"}, {"token_accuracy", "return_token_accuracy"},
      {"predicted_tokens", "return_predicted_tokens"}, {"token_scaling", "use_token_scaling"},
      {"softcap", "softcap"},     {"label_smoothing", "label_smoothing"},
      {"lse_square", "lse_square_scale"}};
  if (auto it = flags.find(field); it != flags.end()) return value == "on" ? it->second : "";
  if (field == "accum_dtype" && value != "none") return "accum_dtype";
  if (field == "reduction" && value != "mean") return "reduction";
  if (field == "token_grad") return "reduction";
  if (field == "ignore" && value != "none") return "ignore_index";
  if (field == "requires_grad" && value.find("bias") != std::string::npos) return "bias";
  return "";
}

// Why the subject's contract or capabilities exclude a field value ("" when they do not).
std::string excluded(const Column& col, const std::string& field, const std::string& value) {
  const json contract = col.caps.value("contract", json());
  const std::string p = param_of(field, value);
  if (!p.empty()) {
    const json lacks = col.caps.value("lacks", json::array());
    if (std::find(lacks.begin(), lacks.end(), p) != lacks.end())
      return contract.is_object() && contract.contains("params")
                 ? fmt::format("contract params: {}; no {}", join(contract["params"]), p)
                 : fmt::format("its callable takes no {}", p);
  }
  if (field == "dtypes" && contract.is_object() && contract.contains("dtypes")) {
    const std::string in = value.substr(0, value.find('/'));
    const json& d = contract["dtypes"];
    if (std::find(d.begin(), d.end(), in) == d.end()) return fmt::format("contract dtypes: {}", join(d));
  }
  return "";
}

std::string plural(int64_t n) { return fmt::format("{} case{}", n, n == 1 ? "" : "s"); }

ojson cell_of(const Column& col, const std::string& cell, const std::string& field, const std::string& value) {
  ojson c;
  if (!col.ran) {
    c["kind"] = "not_run";
    c["why"] = col.why;
    c["text"] = "not run (" + col.why + ")";
    return c;
  }
  auto it = col.cells.find(cell);
  const std::string why = excluded(col, field, value);
  if (it == col.cells.end() || it->second.cases == 0) {
    c["kind"] = why.empty() ? "not_sampled" : "unsupported";
    if (!why.empty()) c["why"] = why;
    c["cases"] = 0;
    c["text"] = why.empty() ? "not sampled" : "unsupported (" + why + ")";
    return c;
  }
  const Stat& st = it->second;
  c["cases"] = st.cases;
  std::vector<std::string> parts;
  ojson f = ojson::object();
  for (auto& [id, n] : st.findings) {
    f[id] = n;
    parts.push_back(fmt::format("{} ({})", id, plural(n)));
  }
  // A pass that needed the subject's declared approximation is shown as such, never as a pass.
  if (st.approx) parts.push_back(fmt::format("approximation within its tolerance ({})", plural(st.approx)));
  if (st.pass > st.approx) parts.push_back(fmt::format("pass ({})", plural(st.pass - st.approx)));
  for (auto& [w, n] : st.unsupported) parts.push_back(fmt::format("unsupported ({}; {})", w, plural(n)));
  for (auto& [o, n] : st.other) parts.push_back(fmt::format("{} ({})", o, plural(n)));
  c["kind"] = !st.findings.empty() ? "finding" : st.approx ? "approximation" : st.pass ? "pass"
              : !st.unsupported.empty() ? "unsupported" : "other";
  if (!st.findings.empty()) c["findings"] = f;
  if (c["kind"] == "unsupported") c["why"] = "supports(): " + st.unsupported.begin()->first;
  std::string text;
  for (auto& p : parts) text += (text.empty() ? "" : "; ") + p;
  c["text"] = text;
  return c;
}

std::string outcome_class(const std::string& o) {
  if (o == "pass") return "pass";
  if (o == "unsupported" || o.rfind("unsupported-by-subject:", 0) == 0) return "unsupported";
  return is_finding(o) ? "finding" : "other";
}

ojson compare(const Column& a, const Column& b) {
  ojson r{{"a", a.in->subject}, {"b", b.in->subject}};
  int64_t common = 0, same = 0, loss_compared = 0, contract_differences = 0;
  ojson loss_diffs = ojson::array(), outcome_diffs = ojson::array();
  for (auto& [key, la] : a.keys) {
    auto it = b.keys.find(key);
    if (it == b.keys.end()) continue;
    ++common;
    const Line& lb = it->second;
    if (la.input.empty() || la.input != lb.input) continue;
    ++same;
    const std::string ca = outcome_class(la.outcome), cb = outcome_class(lb.outcome);
    if (ca != cb) {
      if (ca == "unsupported" || cb == "unsupported") ++contract_differences;
      else outcome_diffs.push_back({{"key", key}, {"a", la.outcome}, {"b", lb.outcome}});
    }
    if (!la.loss.is_object() || !lb.loss.is_object()) continue;
    // Both within their own contracts and still apart: the contracts differ here (semantics).
    const std::string note = ca == "pass" && cb == "pass" ? " (both pass their own contracts)" : "";
    for (auto& [oracle, x] : la.loss.items()) {
      if (!lb.loss.contains(oracle)) continue;
      const json& y = lb.loss[oracle];
      if (x["got"].is_null() || y["got"].is_null()) continue;  // a value the report did not carry
      ++loss_compared;
      const bool fa = x["got"].is_number(), fb = y["got"].is_number();
      ojson d{{"key", key}, {"oracle", oracle}, {"a", x["got"]}, {"b", y["got"]}, {"a_outcome", la.outcome},
              {"b_outcome", lb.outcome}};
      if (fa != fb) {
        d["why"] = fmt::format("{} is {}, {} is finite{}", fa ? b.in->subject : a.in->subject,
                               (fa ? y : x)["got"].dump(), fa ? a.in->subject : b.in->subject, note);
        loss_diffs.push_back(d);
      } else if (!fa && x["got"] != y["got"]) {
        d["why"] = fmt::format("{} vs {}{}", x["got"].dump(), y["got"].dump(), note);
        loss_diffs.push_back(d);
      } else if (fa && x["bound"].is_number() && y["bound"].is_number()) {
        const double diff = std::abs(x["got"].get<double>() - y["got"].get<double>());
        const double bound = x["bound"].get<double>() + y["bound"].get<double>();
        if (diff > bound) {
          d["diff"] = diff;
          d["bound"] = bound;
          d["why"] = fmt::format("|a - b| = {:.6g} > bound_a + bound_b = {:.6g}{}", diff, bound, note);
          loss_diffs.push_back(d);
        }
      }
    }
  }
  r["common_keys"] = common;
  r["same_inputs"] = same;
  r["loss_compared"] = loss_compared;
  r["contract_differences"] = contract_differences;
  r["loss_disagreements"] = loss_diffs;
  r["outcome_disagreements"] = outcome_diffs;
  return r;
}

}  // namespace

ojson conformance_table(const std::vector<ConformanceColumn>& columns, uint64_t seed) {
  std::vector<Column> cols;
  for (auto& c : columns) cols.push_back(load(c));
  ojson t{{"schema", "flce-conformance/1"}, {"seed", seed}};
  t["cell_kinds"] = {"pass", "finding", "unsupported", "approximation", "not_sampled", "not_run", "other"};
  ojson subjects = ojson::array();
  for (auto& c : cols) {
    ojson s{{"subject", c.in->subject}, {"dir", c.in->dir.string()}, {"exit", c.in->exit_status}, {"ran", c.ran}};
    if (!c.ran) s["why"] = c.why;
    if (c.ran) {
      s["cases"] = c.keys.size();
      s["capabilities"] = c.caps;
      ojson ids = ojson::array();
      for (auto& f : c.report.value("findings", json::array())) ids.push_back(f.value("id", ""));
      s["findings"] = ids;
    }
    subjects.push_back(s);
  }
  t["subjects"] = subjects;
  ojson rows = ojson::array();
  std::vector<std::string> universe = coverage_universe();
  universe.insert(universe.end(), {"lane=eager", "lane=compiled"});
  for (const std::string& cell : universe) {
    const std::string field = cell.substr(0, cell.find('=')), value = cell.substr(cell.find('=') + 1);
    if (field == "out_variant" || (field == "kind" && value != "flce")) continue;  // op kinds: not FLCE
    ojson row{{"cell", cell}, {"field", field}, {"value", value}};
    for (auto& c : cols) row["cells"][c.in->subject] = cell_of(c, cell, field, value);
    rows.push_back(row);
  }
  t["rows"] = rows;
  ojson cmp = ojson::array();
  for (size_t i = 0; i < cols.size(); ++i)
    for (size_t j = i + 1; j < cols.size(); ++j)
      if (cols[i].ran && cols[j].ran) cmp.push_back(compare(cols[i], cols[j]));
  t["comparisons"] = cmp;
  return t;
}

std::string conformance_markdown(const ojson& t) {
  std::string md = fmt::format("# flce conformance\n\nSeed {}: every subject ran the sampled cases of this seed "
                               "(keys `sample:{}...`), each judged by its own contract.\n\n",
                               t["seed"].get<uint64_t>(), t["seed"].get<uint64_t>());
  md += "## Subjects\n\n| subject | campaign | cases | contract | lacks |\n|---|---|---|---|---|\n";
  for (auto& s : t["subjects"]) {
    if (!s["ran"].get<bool>()) {
      md += fmt::format("| {} | {} | - | not run: {} | - |\n", s["subject"].get<std::string>(),
                        s["dir"].get<std::string>(), s.value("why", ""));
      continue;
    }
    const auto caps = s.value("capabilities", ojson::object());
    const auto contract = caps.value("contract", ojson());
    std::string ctext = "none declared (judged as liger)";
    if (contract.is_object()) {
      ctext = contract.value("semantics", "liger") + " semantics";
      if (contract.contains("dtypes")) ctext += ", dtypes " + join(contract["dtypes"]);
    }
    md += fmt::format("| {} | {} (exit {}) | {} | {} | {} |\n", s["subject"].get<std::string>(),
                      s["dir"].get<std::string>(), s["exit"].get<int>(), s["cases"].get<int64_t>(), ctext,
                      caps.contains("lacks") && !caps["lacks"].empty() ? join(caps["lacks"]) : "-");
  }
  md += "\n## Table\n\nRows: the campaign coverage table's field values and the lane. Cells: `pass (n cases)`; "
        "the finding ids with their case counts (each the subject's own campaign's: DIR/<subject>/findings/<id>); `unsupported (why)` where the subject's contract or capabilities "
        "exclude the value (or its supports() refused every such case); `approximation within its tolerance` "
        "for a subject that declares one; `not sampled` where it ran no such case; `not run` where its "
        "campaign did not.\n\n| feature |";
  std::string sep = "|---|";
  for (auto& s : t["subjects"]) {
    md += " " + s["subject"].get<std::string>() + " |";
    sep += "---|";
  }
  md += "\n" + sep + "\n";
  for (auto& r : t["rows"]) {
    md += "| " + r["cell"].get<std::string>() + " |";
    for (auto& s : t["subjects"]) md += " " + r["cells"][s["subject"].get<std::string>()]["text"].get<std::string>() + " |";
    md += "\n";
  }
  md += "\n## Implementation vs implementation\n\nFor each pair of subjects, the case keys both ran on identical "
        "inputs (the case JSON less its semantics: a contract may change a sampled case, e.g. drop its bias) "
        "are compared:\n\n"
        "* **scalar loss** (reduction mean or sum), oracle by oracle: a and b disagree when "
        "|a - b| > bound_a + bound_b, each bound the one its subject's own verdict used for the loss against the "
        "fp64 reference (judge/MATH.md; derived per case, never a hand-set tolerance), or when one is finite and "
        "the other not (e.g. an all-ignored mean: NaN under torch semantics, 0 under liger's);\n"
        "* **outcome class** (pass / finding): one passes where the other is a finding. A case one subject "
        "refused as unsupported is counted under \"contract differences\", not listed.\n\n"
        "| pair | common keys | same inputs | losses compared | loss disagreements | outcome disagreements | "
        "contract differences |\n|---|---|---|---|---|---|---|\n";
  for (auto& c : t["comparisons"])
    md += fmt::format("| {} vs {} | {} | {} | {} | {} | {} | {} |\n", c["a"].get<std::string>(),
                      c["b"].get<std::string>(), c["common_keys"].get<int64_t>(), c["same_inputs"].get<int64_t>(),
                      c["loss_compared"].get<int64_t>(), c["loss_disagreements"].size(),
                      c["outcome_disagreements"].size(), c["contract_differences"].get<int64_t>());
  constexpr size_t kListed = 20;
  for (auto& c : t["comparisons"]) {
    const std::string a = c["a"].get<std::string>(), b = c["b"].get<std::string>();
    if (c["loss_disagreements"].empty() && c["outcome_disagreements"].empty()) continue;
    md += fmt::format("\n### {} vs {}\n\n", a, b);
    size_t n = 0;
    for (auto& d : c["loss_disagreements"]) {
      if (n++ == kListed) {
        md += fmt::format("* ... {} more in conformance.json\n", c["loss_disagreements"].size() - kListed);
        break;
      }
      md += fmt::format("* loss `{}` ({}): {} = {}, {} = {}: {} (outcomes {}, {})\n", d["key"].get<std::string>(),
                        d["oracle"].get<std::string>(), a, d["a"].dump(), b, d["b"].dump(), d["why"].get<std::string>(),
                        d["a_outcome"].get<std::string>(), d["b_outcome"].get<std::string>());
    }
    n = 0;
    for (auto& d : c["outcome_disagreements"]) {
      if (n++ == kListed) {
        md += fmt::format("* ... {} more in conformance.json\n", c["outcome_disagreements"].size() - kListed);
        break;
      }
      md += fmt::format("* outcome `{}`: {} {}, {} {}\n", d["key"].get<std::string>(), a,
                        d["a"].get<std::string>(), b, d["b"].get<std::string>());
    }
  }
  return md;
}

}  // namespace flce
