#include "repro/upstream_report.hpp"
#include "judge/ratio.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "case/case.hpp"
#include "repro/script_check.hpp"
#include "repro/upstream_provenance.hpp"
#include "judge/signature.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

// What the campaign's analysis found (findings/analyze.hpp): the cause, the outputs under it,
// the marginal check, and whether a known list already had it; "" for a finding without one.
std::string cause_paragraph(const json& f) {
  if (!f.is_object() || f.value("cause_status", "") != "ablated") return "";
  std::string essential, outputs;
  const json ess = f.value("essential", json::array());
  for (auto& e : ess)
    if (e.is_string()) essential += (essential.empty() ? "`" : ", `") + e.get<std::string>() + "`";
  const json outs = f.value("outputs", json::object());  // named: items() of a temporary dangles
  for (auto& [o, n] : outs.items()) outputs += fmt::format("{}{} ({})", outputs.empty() ? "" : ", ", o, n.dump());
  std::string s = fmt::format("**Cause** (flce's analysis in a fresh worker): `{}`: ", f.value("cause", ""));
  s += essential.empty() ? "it fails with every feature at its default"
                         : "the failure goes away when " + essential + " is reset to its default";
  s += fmt::format(" ({} features tried, {} runs).", f.value("tested", json::array()).size(),
                   f.value("ablation_runs", 0));
  if (f.value("count", 0) > 0)
    s += fmt::format(" Seen in {} cases of the campaign{}.", f.value("count", 0),
                     outputs.empty() ? "" : "; outputs out of line under this cause: " + outputs);
  if (f.contains("confirm") && f["confirm"].is_object()) {
    const auto& c = f["confirm"];
    s += fmt::format(" Marginal ({} of its bound): on {} fresh seeds of the configuration {} exceed, worst {}.",
                     ratio_text(c.value("first_ratio", 0.0)), c.value("seeds", 0), c.value("exceed", 0),
                     ratio_text(c.value("max_ratio", 0.0)));
  }
  if (!f.value("known", "").empty()) s += " Known: " + f.value("known", "") + ".";
  return s;
}


json read_json(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return nullptr;
  json j = json::parse(read_text(p), nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

// A file that parses as a Case (canonical or not); null otherwise.
json case_file(const fs::path& p) {
  try {
    return json::parse(to_json(from_json(read_text(p)), -1));
  } catch (const std::exception&) {
    return nullptr;
  }
}

// Shortest text that reads back as the same double (what report.json holds): exact values.
std::string num(const json& v) {
  if (v.is_number()) return v.dump();
  if (v.is_string()) return v.get<std::string>();
  return "-";
}

// "[3, 17]" for flat index 113 of shape [8, 32].
std::string element(int64_t flat, const json& shape) {
  if (!shape.is_array() || shape.empty()) return flat == 0 ? "(scalar)" : std::to_string(flat);
  std::vector<int64_t> idx(shape.size());
  int64_t rest = flat;
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t d = std::max<int64_t>(1, shape[k].get<int64_t>());
    idx[k] = rest % d;
    rest /= d;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

std::string finding_words(const std::string& f) {
  if (f == "out-of-bounds") return "out of bounds";
  if (f == "nonfinite") return "NaN/Inf where fp64 is finite (or the reverse)";
  if (f == "dtype") return "in another dtype than eager's";
  if (f == "shape") return "has the wrong shape";
  if (f == "missing") return "not returned";
  if (f == "prediction") return "predicted tokens outside the acceptable set";
  return f;
}

// The outcome line split: "<what>@<where>" (judge:<output>:<finding>@<oracle>,
// <signature>@<oracle>:<stage>, crash:<how>@<stage>, timeout@<stage>).
struct Outcome {
  std::string what, where, signature, output, finding, oracle, stage;
  bool judge = false, crash = false, timeout = false;
};

Outcome split(const std::string& o) {
  Outcome r;
  const size_t at = o.rfind('@');
  r.what = o.substr(0, at);
  r.where = at == std::string::npos ? "" : o.substr(at + 1);
  const size_t colon = r.where.find(':');
  r.oracle = r.where.substr(0, colon);
  r.stage = colon == std::string::npos ? "" : r.where.substr(colon + 1);
  if (r.what.rfind("judge:", 0) == 0) {
    r.judge = true;
    const std::string rest = r.what.substr(6);
    const size_t c = rest.rfind(':');
    r.output = rest.substr(0, c);
    r.finding = c == std::string::npos ? "" : rest.substr(c + 1);
  } else if (r.what.rfind("crash:", 0) == 0) {
    r.crash = true;
    r.signature = r.what.substr(6);
  } else if (r.what == "timeout") {
    r.timeout = true;
  } else {
    r.signature = r.what;
  }
  return r;
}

const json* oracle_named(const json& report, const std::string& name) {
  if (!report.is_object() || !report.contains("oracles")) return nullptr;
  for (auto& o : report["oracles"])
    if (json_str(o, "oracle") == name) return &o;
  return nullptr;
}

// "torch.compile (inductor)" / "eager": the backend the compiled oracle ran, else the case's.
std::string side_words(const json& report, const json& case_json, const Outcome& oc) {
  if (oc.oracle == "eager") return "eager";
  if (oc.oracle.rfind("compiled", 0) == 0) {
    const json* o = oracle_named(report, oc.oracle);
    std::string backend = o ? json_str(*o, "backend") : "";
    for (const json* c : {report.is_object() && report.contains("case") ? &report["case"] : nullptr, &case_json})
      if (backend.empty() && c && c->is_object() && c->contains("compile") && (*c)["compile"].is_object())
        backend = json_str((*c)["compile"], "backend");
    return backend.empty() ? "torch.compile" : fmt::format("torch.compile ({})", backend);
  }
  return oc.oracle;
}

// What a reader scans the title for: the case's non-default features.
std::vector<std::string> case_features(const json& cj) {
  std::vector<std::string> v;
  Case c;
  try {
    c = from_json(cj.dump());
  } catch (const std::exception&) {
    return v;
  }
  if (c.is_op()) v.push_back(fmt::format("aten.{}(out_dtype={}{})", name(c.kind), dtype_name(c.op_out_dtype()),
                                         c.out_variant ? ", out=" : ""));
  if (c.reduction != Reduction::MEAN) v.push_back(fmt::format("reduction='{}'", name(c.reduction)));
  if (c.return_z_loss || c.lse_square_scale > 0) v.push_back("z-loss");
  if (c.label_smoothing > 0) v.push_back(fmt::format("label_smoothing={}", c.label_smoothing));
  if (c.softcap) v.push_back(fmt::format("softcap={}", *c.softcap));
  if (c.ce_weight) v.push_back("class weights");
  if (c.ignore_fraction > 0) v.push_back("ignored tokens");
  if (c.return_token_accuracy) v.push_back("token accuracy");
  if (c.return_predicted_tokens) v.push_back("predicted tokens");
  if (c.autocast != Autocast::NONE) v.push_back(fmt::format("autocast {}", name(c.autocast)));
  if (c.input_dtype == c.weight_dtype) v.push_back(std::string(dtype_name(c.input_dtype)));
  else v.push_back(fmt::format("{} input, {} weight", dtype_name(c.input_dtype), dtype_name(c.weight_dtype)));
  if (c.accum_dtype) v.push_back(fmt::format("{} accumulation", dtype_name(*c.accum_dtype)));
  if (c.device == Device::CUDA) v.push_back("CUDA");
  return v;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

const KnownSignature* known(const SignatureTable& t, const std::string& id) {
  for (auto& k : t.entries())
    if (k.id == id) return &k;
  return nullptr;
}

// Which side is to blame, when the judge's three-way verdict says so ("guilty" per output).
std::string guilty_of(const json& out) {
  if (!out.is_object() || !out.contains("guilty")) return "";
  const json& g = out["guilty"];
  return g.is_string() ? g.get<std::string>() : g.dump();
}

const json& case_for_title(const FindingFiles& f) { return f.minimized_json.is_null() ? f.case_json : f.minimized_json; }

std::string fault_kernel(const FindingFiles& f) { return json_str(f.cuda_fault, "kernel"); }

// Matrix rows for this finding and subject: a row's case file read back is this case (or its
// shrunk form); a file that cannot be read matches by its name and folder (a matrix run on
// another machine). One row and nothing matched: a matrix run for this case alone.
std::vector<const json*> matrix_rows(const FindingFiles& f) {
  std::vector<const json*> rows, all;
  if (!f.matrix.is_object() || !f.matrix.contains("rows") || !f.matrix["rows"].is_array()) return rows;
  auto tail = [](const fs::path& p) { return p.parent_path().filename() / p.filename(); };
  for (auto& r : f.matrix["rows"]) {
    if (json_str(r, "subject").find("+workaround") != std::string::npos || !r.contains("cells")) continue;
    all.push_back(&r);
    const fs::path p = json_str(r, "case");
    if (p.empty()) continue;
    const fs::path q = p.is_absolute() ? p : f.matrix_path.parent_path() / p;
    const json c = case_file(q);
    const bool same = !c.is_null() ? c == f.case_json || (!f.minimized_json.is_null() && c == f.minimized_json)
                                   : tail(p) == tail(f.case_path) || (!f.minimized_path.empty() && tail(p) == tail(f.minimized_path));
    if (same && (f.subject().empty() || json_str(r, "subject") == f.subject())) rows.push_back(&r);
  }
  if (rows.empty() && all.size() == 1) rows = all;
  return rows;
}

// What `flce repro --check` saw when the script ran alone, against flce's own verdict.
std::string check_words(const json& c) {
  const json& alone = c["alone"];
  const std::string got = json_str(alone, "line").empty() ? "no verdict line" : md_code(json_str(alone, "line"));
  const std::string run = fmt::format("{}, exit {}, {:.0f} s", json_str(alone, "how"), alone.value("exit", -1),
                                      alone.value("seconds", 0.0));
  const std::string ours = c.contains("flce") ? json_str(c["flce"], "line") : "";
  if (c.value("same_verdict", false))
    return fmt::format("**Checked alone** by `flce repro --check` ({}): it printed {}, as flce does.", run, got);
  return fmt::format("**This script did not reproduce alone** (`flce repro --check`: {}): it printed {} where flce's "
                     "subject host gives {}. Until that difference is triaged, reproduce with {}.",
                     run, got, md_code(ours), md_code(json_str(c, "reproduce_with")));
}

}  // namespace

std::string FindingFiles::outcome() const {
  if (const std::string s = json_str(finding, "signature"); !s.empty()) return s;
  return json_str(report, "outcome");
}

std::string FindingFiles::subject() const {
  if (const std::string s = json_str(report, "subject"); !s.empty()) return s;
  return json_str(campaign, "subject");
}

FindingFiles load_finding(const fs::path& path, const fs::path& matrix, const fs::path& bisect) {
  FindingFiles f;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    f.dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    f.case_json = case_file(path);
    if (f.case_json.is_null()) throw FindingInputError(fmt::format("{}: not a case file (flce case validate says why)", path.string()));
    f.case_path = path;
  } else if (fs::is_directory(path, ec)) {
    f.dir = path;
    for (const char* n : {"case.json", "minimized.json"})
      if (json c = case_file(path / n); !c.is_null() && f.case_json.is_null()) f.case_json = c, f.case_path = path / n;
    if (f.case_json.is_null()) {  // a folder `flce repro -o` / `flce minimize --out` wrote into: its one case file
      std::vector<fs::path> cands;
      for (auto& e : fs::directory_iterator(path, ec))
        if (e.path().extension() == ".json" && !case_file(e.path()).is_null()) cands.push_back(e.path());
      std::sort(cands.begin(), cands.end());
      if (!cands.empty()) f.case_json = case_file(cands.front()), f.case_path = cands.front();
    }
    if (f.case_json.is_null())
      throw FindingInputError(fmt::format(
          "{}: not a finding directory: no case file (case.json, minimized.json or another valid case *.json)", path.string()));
  } else {
    throw FindingInputError(fmt::format("{}: no such file or directory", path.string()));
  }
  if (f.case_path.filename() != "minimized.json")
    if (json m = case_file(f.dir / "minimized.json"); !m.is_null()) f.minimized_json = m, f.minimized_path = f.dir / "minimized.json";
  f.report = read_json(f.dir / "report.json");
  if (!f.report.is_object() || !f.report.contains("outcome")) f.report = nullptr;
  if (!f.minimized_json.is_null()) {
    f.minimized_report = read_json(f.dir / "minimized_report.json");
    if (!f.minimized_report.is_object() || !f.minimized_report.contains("outcome")) f.minimized_report = nullptr;
  }
  f.finding = read_json(f.dir / "finding.json");
  f.cuda_fault = read_json(f.dir / "cuda_fault.json");
  if (!f.finding.is_null()) f.campaign = read_json(f.dir.parent_path().parent_path() / "state.json");
  if (fs::is_regular_file(f.dir / "repro.py", ec)) f.repro_path = f.dir / "repro.py", f.repro_py = read_text(f.repro_path);
  if (!f.repro_py.empty())  // a check of an older repro.py says nothing of this one
    if (json c = read_json(f.dir / "repro.check.json");
        c.is_object() && c.value("script_fingerprint", "") == script_fingerprint(f.repro_py) && c.contains("alone"))
      f.script_check = c;
  std::vector<fs::path> mats;
  if (!matrix.empty()) mats = {matrix};
  else mats = {f.dir / "matrix.json", f.dir / "matrix" / "matrix.json", f.dir.parent_path().parent_path() / "matrix.json"};
  for (auto& m : mats) {
    json j = read_json(m);
    if (j.is_object() && j.contains("rows")) {
      f.matrix = j, f.matrix_path = m;
      break;
    }
    if (!matrix.empty())
      throw FindingInputError(fmt::format("--matrix {}: not a flce matrix result (matrix.json with \"rows\")", m.string()));
  }
  f.bisect = read_bisect(f.dir, bisect, f.bisect_path);
  return f;
}

std::string upstream_title(const FindingFiles& f, const SignatureTable& table) {
  const Outcome oc = split(f.outcome());
  const std::string features = join(case_features(case_for_title(f)), ", ");
  const std::string subject = f.subject().empty() ? "" : fmt::format(" [{}]", f.subject());
  const std::string side = side_words(f.report, f.case_json, oc);
  if (!fault_kernel(f).empty())
    return fmt::format("FLCE: CUDA fault ({}) in kernel {} with {}{}", json_str(f.cuda_fault, "error").empty() ? "illegal access" : json_str(f.cuda_fault, "error"),
                       fault_kernel(f), features, subject);
  if (oc.judge) {
    std::string who = side;
    if (const json* o = oracle_named(f.report, oc.oracle); o && o->contains("outputs"))
      for (auto& out : (*o)["outputs"])
        // "unknown" (no same-contract reference ran) says nothing: keep the lane's word.
        if (const std::string g = guilty_of(out); json_str(out, "output") == oc.output && !g.empty() && g != "unknown") who = g;
    return fmt::format("FLCE: {} {} {} vs fp64 with {}{}", who, oc.output, finding_words(oc.finding), features, subject);
  }
  if (oc.crash) return fmt::format("FLCE: {} process killed by {} during {} with {}{}", side.empty() ? "subject" : side,
                                   oc.signature, oc.where, features, subject);
  if (oc.timeout) return fmt::format("FLCE: hangs during {} with {}{}", oc.where, features, subject);
  const KnownSignature* k = known(table, oc.signature);
  const std::string what = k ? fmt::format("{}: {}", oc.signature, k->title)
                             : [&] {
                                 const json* o = oracle_named(f.report, oc.oracle);
                                 const std::string m = o && o->contains("signature") ? json_str((*o)["signature"], "matched") : "";
                                 return m.empty() ? oc.signature : m.substr(0, 120);
                               }();
  const std::string who = oc.oracle == "eager" ? "eager" : side;
  const std::string stage = oc.stage.empty() || oc.stage == "-" ? "" : fmt::format(", first failing backend {}", oc.stage);
  return fmt::format("{}: {} with {}{}{}", who, what, features, stage, subject);
}

Markdown upstream_report(const FindingFiles& f, const SignatureTable& table, const std::string& flce_version) {
  Markdown md;
  const std::string outcome = f.outcome();
  const Outcome oc = split(outcome);
  md.heading(1, upstream_title(f, table));
  const json env = f.report.is_object() ? f.report.value("environment", json::object()) : json::object();
  const SubjectSource source = subject_source(f);
  md.paragraph(fmt::format(
      "Found by flce (differential fuzzing of fused linear cross entropy against a CPU fp64 "
      "golden reference, with bounds derived from unit roundoffs and reduction lengths). Subject `{}`{}; outcome "
      "`{}`.",
      f.subject().empty() ? "?" : f.subject(), source.text.empty() ? "" : ": " + source.text,
      outcome.empty() ? "?" : outcome));

  // ---- environment
  if (const std::string cause = cause_paragraph(f.finding); !cause.empty()) md.paragraph(cause);
  md.heading(2, "Environment");
  Table et{{"", ""}, {}};
  auto env_row = [&](const char* label, const char* key) {
    if (const std::string v = json_str(env, key); !v.empty()) et.row({label, md_code(v)});
  };
  env_row("torch", "torch");
  env_row("Triton", "triton");
  env_row("Python", "python");
  env_row("CUDA", "cuda");
  if (std::string g = json_str(env, "gpu"); !g.empty())
    et.row({"GPU", md_code(g + (json_str(env, "capability").empty() ? "" : " (sm " + json_str(env, "capability") + ")"))});
  env_row("platform", "platform");
  // The installed wheel is not what ran when the subject is a Liger tree: say so, not just its number.
  const bool other_liger = source.tree && f.subject().rfind("liger", 0) == 0;
  if (const std::string v = json_str(env, "liger"); !v.empty())
    et.row({other_liger ? "Liger-Kernel installed" : "Liger-Kernel",
            md_code(v) + (other_liger ? " (another copy: the subject ran from the tree below)" : "")});
  if (!f.subject().empty()) et.row({"subject", md_code(f.subject()) + (source.text.empty() ? "" : ": " + source.text)});
  if (!source.commit.empty()) et.row({"subject commit", md_code(source.commit)});
  if (et.rows.empty()) md.paragraph("Not recorded (no report.json next to the case).");
  else md.add(et);

  // ---- reproducer
  md.heading(2, "Reproducer");
  if (!f.repro_py.empty()) {
    md.paragraph(fmt::format(
        "Standalone ({}, written by flce): needs torch (its long form numpy too), not flce; exits 0 and prints "
        "`REPRODUCED: {}` "
        "where the bug shows, 1 `NOT REPRODUCED`, 2 `SKIP` (with the reason) where it cannot show. flce's own "
        "subjects import from flce's `subjects/` (`PYTHONPATH=<flce>/subjects python repro.py`).",
        md_code(f.repro_path.filename().string()), outcome));
    if (f.script_check.is_object()) md.paragraph(check_words(f.script_check));
    md.add(CodeBlock{"python", f.repro_py});
  } else {
    md.paragraph("No repro.py next to the case; the case itself (`flce repro --emit-python` writes the script):");
  }
  md.paragraph(fmt::format("The case ({}):", md_code(f.case_path.filename().string())));
  md.add(CodeBlock{"json", case_for_title(f).dump(1)});

  // ---- observed vs expected
  md.heading(2, "Observed vs expected");
  // The values of the minimized case's own run when the shrinker kept it (minimized_report.json),
  // so they match what repro.py prints; else the run that found it, and the text says so, so
  // the indices below are not read against repro.py's tensors.
  const bool shrunk = !f.minimized_json.is_null() && f.minimized_json != f.case_json;
  const json& run = shrunk && f.minimized_report.is_object() ? f.minimized_report : f.report;
  if (shrunk && f.minimized_report.is_object())
    md.paragraph("The values below are from the run of the minimized case (`minimized.json`, the one `repro.py` runs).");
  else if (shrunk)
    md.paragraph("The values below are from the run that found it (`case.json`, the unminimized case); "
                 "`repro.py` runs the minimized case, which shows the same outcome on fewer elements.");
  const json* bad = oracle_named(run, oc.oracle);
  if (oc.judge) {
    md.paragraph(fmt::format(
        "Expected: every output within its bound of the fp64 golden (judge/MATH.md). Observed: {} `{}` {}.",
        side_words(run, f.case_json, oc), oc.output, finding_words(oc.finding)));
    Table t{{"oracle", "output", "dtype", "finding", "worst element", "observed", "fp64", "abs error", "bound",
             "error / bound", "elements out"},
            {}};
    bool guilty = false;
    if (run.is_object() && run.contains("oracles"))
      for (auto& o : run["oracles"]) {
        if (!o.contains("outputs")) continue;
        for (auto& out : o["outputs"]) {
          if (json_str(out, "finding") == "ok") continue;
          const std::string name = json_str(out, "output");
          const json shape = run.contains("golden") && run["golden"].contains(name)
                                 ? run["golden"][name].value("shape", json::array()) : json::array();
          const int64_t wi = out.value("worst_index", int64_t{-1});
          std::vector<std::string> row{md_code(json_str(o, "oracle") + (json_str(o, "backend").empty() ? "" : "[" + json_str(o, "backend") + "]")),
                                       md_code(name), json_str(out, "dtype"), json_str(out, "finding"),
                                       wi >= 0 ? md_code(element(wi, shape)) : "-",
                                       out.contains("got_at_worst") ? num(out["got_at_worst"]) : "-",
                                       out.contains("fp64_at_worst") ? num(out["fp64_at_worst"]) : "-",
                                       num(out.value("max_abs_err", json())), num(out.value("bound_at_worst", json())),
                                       out.contains("err_over_bound") && out["err_over_bound"].is_number() ? fmt::format("{:.3g}x", out["err_over_bound"].get<double>()) : "inf",
                                       num(out.value("n_out_of_bounds", json()))};
          if (!guilty_of(out).empty()) guilty = true;
          row.push_back(guilty_of(out));
          t.row(row);
        }
      }
    if (guilty) t.columns.push_back("guilty");
    else
      for (auto& r : t.rows) r.pop_back();
    if (t.rows.empty()) md.paragraph("(report.json has no per-output verdicts)");
    else md.add(t);
    if (bad && bad->contains("outputs"))
      for (auto& out : (*bad)["outputs"])
        if (json_str(out, "output") == oc.output && !json_str(out, "detail").empty()) md.paragraph("Judge: " + json_str(out, "detail"));
    md.paragraph("`observed`, `fp64`, `bound` and `error / bound` are at the worst element (the largest error/bound "
                 "ratio); `abs error` is the largest over the whole output. Bounds are per element, derived from the "
                 "dtypes' unit roundoffs and the reduction lengths.");
  } else if (oc.crash || oc.timeout) {
    md.paragraph(fmt::format("Expected: the call returns. Observed: {} during `{}`{}.",
                             oc.crash ? "the process was killed by " + md_code(oc.signature) : "no answer within the case timeout",
                             oc.where, json_str(f.finding, "detail").empty() ? "" : " (" + json_str(f.finding, "detail") + ")"));
  } else {
    const json sig = bad && bad->contains("signature") ? (*bad)["signature"] : json::object();
    md.paragraph(fmt::format("Expected: {} runs like eager does (outputs within bounds of fp64). Observed: it raises.",
                             side_words(f.report, f.case_json, oc)));
    Table t{{"", ""}, {}};
    t.row({"signature", md_code(oc.signature) + (sig.value("known", false) ? " (known)" : " (new bucket)")});
    if (!json_str(sig, "phase").empty()) t.row({"phase", json_str(sig, "phase")});
    if (!json_str(sig, "innermost_torch_frame").empty()) t.row({"innermost torch frame", md_code(json_str(sig, "innermost_torch_frame"))});
    if (!json_str(sig, "title").empty()) t.row({"what", json_str(sig, "title")});
    md.add(t);
    if (!json_str(sig, "matched").empty()) {
      md.paragraph("Key message of the exception chain:");
      md.add(CodeBlock{"text", json_str(sig, "matched")});
    } else if (!json_str(f.finding, "detail").empty()) {
      md.add(CodeBlock{"text", json_str(f.finding, "detail")});
    }
  }

  // ---- a CUDA fault: the kernel and its launch (fuzz/findings/cuda_fault.hpp)
  if (f.cuda_fault.is_object()) {
    md.heading(2, "CUDA fault");
    Table t{{"", ""}, {}};
    auto row = [&](const char* label, const char* key, bool code) {
      if (const std::string v = json_str(f.cuda_fault, key); !v.empty()) t.row({label, code ? md_code(v) : v});
    };
    row("re-run", "status", false);
    row("kernel", "kernel", true);
    row("kernel named by", "kernel_source", false);
    row("where in the kernel", "kernel_location", true);
    row("access", "access", false);
    row("thread", "thread", false);
    row("address", "address", false);
    row("launched at", "launch", true);
    row("launch line", "launch_code", true);
    row("error", "error", false);
    md.add(t);
    md.paragraph("Re-run in a fresh process with `CUDA_LAUNCH_BLOCKING=1` (and under `compute-sanitizer --tool memcheck` "
                 "where found); the raw log is `cuda_fault.txt` in the finding directory.");
  } else if (f.finding.is_object() && f.finding.value("cuda_poisoned", false)) {
    md.paragraph("The case poisons the CUDA context; the kernel is not named (no cuda_fault.json: the campaign's "
                 "re-run did not happen).");
  }

  // ---- ladder
  md.heading(2, "Backend ladder");
  if (f.report.is_object() && f.report.contains("ladder") && !f.report["ladder"].empty()) {
    Table t{{"backend", "result"}, {}};
    for (auto& st : f.report["ladder"])
      t.row({md_code(json_str(st, "backend")), st.value("pass", false) ? "ok" : md_code(json_str(st, "what"))});
    md.add(t);
    const std::string first = json_str(f.report, "first_failing_stage");
    md.paragraph(first.empty() ? "First failing stage: none." : "First failing stage: " + md_code(first) +
                 (f.report.value("ladder_memoized", false) ? " (the ladder of an earlier case with the same graph)" : ""));
  } else {
    md.paragraph(oc.judge && oc.oracle == "eager" ? "Not walked: eager itself fails, no compiler involved."
                                                   : "Not walked (no compiled failure, or no report.json).");
  }

  // ---- torch releases
  md.heading(2, "Torch releases");
  const auto rows = matrix_rows(f);
  if (!rows.empty()) {
    Table t{{"torch", "outcome", "reproduces"}, {}};
    std::vector<std::string> yes;
    for (auto* r : rows)
      for (auto& c : (*r)["cells"]) {
        const bool same = json_str(c, "outcome") == outcome;
        if (same) yes.push_back(json_str(c, "torch"));
        t.row({md_code(json_str(c, "torch")), md_code(json_str(c, "outcome")), same ? "yes" : "no"});
      }
    md.paragraph(fmt::format("From `flce matrix` ({}): reproduces on {}.", md_code(f.matrix_path.string()),
                             yes.empty() ? "none of the releases run" : "torch " + join(yes, ", ")));
    md.add(t);
  } else {
    md.paragraph(f.matrix.is_null() ? "No `flce matrix` result next to the finding (pass `--matrix MATRIX_JSON`)."
                                    : "The matrix result names no row for this case.");
  }

  bisect_section(md, f);

  // ---- upstream
  md.heading(2, "Known upstream");
  const KnownSignature* k = known(table, oc.signature);
  std::vector<std::string> links;
  if (k)
    for (auto& u : k->upstream) links.push_back(u);
  if (bad && bad->contains("signature") && (*bad)["signature"].contains("upstream"))
    for (auto& u : (*bad)["signature"]["upstream"])
      if (std::find(links.begin(), links.end(), u.get<std::string>()) == links.end()) links.push_back(u);
  if (!links.empty()) {
    md.paragraph(fmt::format("Matches known signature {}{}; tracked in:", md_code(oc.signature),
                             k ? " (" + k->title + ")" : ""));
    md.add(List{links});
  } else {
    md.paragraph(k ? fmt::format("Known signature {} ({}), no upstream issue recorded.", md_code(oc.signature), k->title)
                   : "None known: judge/signatures.json has no upstream issue for this signature.");
  }

  // ---- dedup, size, flce
  md.heading(2, "Dedup key");
  Table d{{"", ""}, {}};
  d.row({"outcome signature", md_code(outcome)});
  if (!json_str(f.finding, "cause").empty()) d.row({"cause", md_code(json_str(f.finding, "cause"))});
  if (!json_str(f.finding, "id").empty()) d.row({"finding id", md_code(json_str(f.finding, "id"))});
  else if (!outcome.empty()) d.row({"finding id", md_code(finding_id(outcome))});
  if (f.finding.is_object() && f.finding.contains("count")) d.row({"cases that showed it", num(f.finding["count"])});
  md.add(d);
  auto elements = [](const json& c) -> int64_t {
    try {
      return c.is_null() ? -1 : case_size(from_json(c.dump())).elements;
    } catch (const std::exception&) {
      return -1;
    }
  };
  const int64_t before = elements(f.case_json), after = elements(f.minimized_json);
  std::string size = fmt::format("Size: {} input elements", before);
  if (after >= 0)
    size += fmt::format(" before shrinking, {} after{}", after,
                        json_str(f.finding, "shrink").empty() ? "" : fmt::format(" ({}, {} runs)", json_str(f.finding, "shrink"),
                                                                           f.finding.value("shrink_runs", 0)));
  else if (!json_str(f.finding, "shrink").empty())
    size += fmt::format(" (not shrunk: {})", json_str(f.finding, "shrink"));
  md.paragraph(size + ".");
  md.paragraph("Reported by " + flce_version + ".");
  return md;
}

}  // namespace flce
