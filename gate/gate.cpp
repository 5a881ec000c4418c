// Library code for `flce gate`: specs, the case list, the two worker runs, the diff.
#include "gate/gate.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <map>
#include <set>

#include "case/contract.hpp"
#include "case/sampler.hpp"
#include "case/sequence.hpp"
#include "judge/sequence_run.hpp"
#include "judge/expectations.hpp"
#include "judge/signature.hpp"
#include "oracles/git_object.hpp"
#include "oracles/subject_identity.hpp"
#include "oracles/subject_tree.hpp"
#include "oracles/subject_worker.hpp"

namespace flce {

namespace fs = std::filesystem;

GateSpec parse_gate_spec(const std::string& text) {
  GateSpec s;
  s.text = text;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(fmt::format("'{}': expected key=value (keys: subject, path, python, git)", item));
    std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    if (v.empty()) throw std::invalid_argument(fmt::format("{}: empty value", k));
    if (k == "subject") {
      s.subject = v;
    } else if (k == "path") {
      s.path = v;
    } else if (k == "python") {
      s.python = v;
    } else if (k == "git") {
      size_t at = v.rfind('@');
      if (at == std::string::npos || at == 0 || at + 1 == v.size())
        throw std::invalid_argument(fmt::format("git: expected /path/to/checkout@REF, got '{}'", v));
      s.git_repo = v.substr(0, at);
      s.git_ref = v.substr(at + 1);
    } else {
      throw std::invalid_argument(fmt::format("{}: unknown key (keys: subject, path, python, git)", k));
    }
  }
  if (s.subject.empty()) throw std::invalid_argument("subject: missing (e.g. subject=model)");
  return s;
}

std::string spec_text(const GateSpec& s) {
  std::string t = "subject=" + s.subject;
  if (!s.path.empty()) t += ",path=" + s.path;
  if (!s.python.empty()) t += ",python=" + s.python;
  if (!s.git_repo.empty()) t += ",git=" + s.git_repo + "@" + s.git_ref;
  return t;
}

GateSpec merge_base_spec(const GateSpec& candidate, const std::string& branch, const std::string& base_text) {
  if (candidate.git_repo.empty())
    throw std::invalid_argument(fmt::format("--merge-base: the candidate SPEC '{}' has no git=REPO@REF", candidate.text));
  GateSpec base = candidate;
  if (!base_text.empty()) {
    base = parse_gate_spec(base_text);
    if (!base.git_repo.empty())
      throw std::invalid_argument(fmt::format("--merge-base: the base SPEC '{}' has git= (flce computes it)", base_text));
  }
  base.git_repo = candidate.git_repo;
  base.git_ref = merge_base(candidate.git_repo, branch, candidate.git_ref);
  base.text = spec_text(base);
  return base;
}

std::string_view name(GateVerdict v) {
  switch (v) {
    case GateVerdict::SAME_PASS: return "same-pass";
    case GateVerdict::SAME_FAILURE: return "same-failure";
    case GateVerdict::UNSUPPORTED: return "unsupported";
    case GateVerdict::REGRESSED: return "regressed";
    case GateVerdict::CHANGED: return "changed";
    case GateVerdict::STILL_FAILING: return "still-failing";
    case GateVerdict::LOST: return "lost";
    case GateVerdict::NEW_FAILURE: return "new-failure";
    case GateVerdict::FIXED: return "fixed";
    case GateVerdict::NEW_PASS: return "new-pass";
    case GateVerdict::NEW_COVERAGE: return "new-coverage";
    case GateVerdict::SKIPPED: return "skipped";
  }
  return "?";
}

GateVerdict gate_verdict(const std::string& b, const std::string& c, bool strict_changes, const std::string& pinned) {
  const bool b_ok = b == "pass", c_ok = c == "pass";
  // "unsupported" (cannot run here) and "unsupported-by-subject:<param>" (lacks a parameter).
  const bool b_un = is_unsupported_outcome(b), c_un = is_unsupported_outcome(c);
  if (b == c) return b_ok ? GateVerdict::SAME_PASS : b_un ? GateVerdict::UNSUPPORTED : GateVerdict::SAME_FAILURE;
  if (b_un && c_un) return GateVerdict::UNSUPPORTED;  // neither ran it, for different reasons
  if (c_un) return GateVerdict::LOST;
  // The candidate takes a parameter the base lacks: what it shows there is new coverage, not a
  // change against the base (which never ran the case).
  if (!unsupported_params(b).empty()) return GateVerdict::NEW_COVERAGE;
  if (b_un) return c_ok ? GateVerdict::NEW_PASS : GateVerdict::NEW_FAILURE;
  if (b_ok) return GateVerdict::REGRESSED;
  if (c_ok) return GateVerdict::FIXED;
  // Failing to compile either way is not worse for the user; the new signature is listed.
  if (!strict_changes && is_compile_failure(b) && is_compile_failure(c)) return GateVerdict::STILL_FAILING;
  if (!strict_changes && !pinned.empty() && pinned != "pass" && outcome_matches(pinned, c))
    return GateVerdict::STILL_FAILING;
  return GateVerdict::CHANGED;
}

bool is_regression(GateVerdict v) {
  return v == GateVerdict::REGRESSED || v == GateVerdict::CHANGED || v == GateVerdict::LOST ||
         v == GateVerdict::NEW_FAILURE;
}

std::string dtype_label(const Case& c) {
  std::string s(dtype_name(c.input_dtype));
  if (c.weight_dtype != c.input_dtype) s += fmt::format(" x {}w", dtype_name(c.weight_dtype));
  if (c.autocast != Autocast::NONE) s += fmt::format(" (autocast {})", name(c.autocast));
  return s;
}

namespace {

// "tier2-lowering@compiled:inductor" -> oracle "compiled"; "judge:loss:nonfinite@eager" -> "eager".
std::string oracle_of(const std::string& outcome) {
  size_t at = outcome.rfind('@');
  if (at == std::string::npos) return "";
  return outcome.substr(at + 1, outcome.find(':', at) == std::string::npos ? std::string::npos
                                                                          : outcome.find(':', at) - at - 1);
}

std::string join(const std::set<std::string>& s, const char* sep) {
  std::string out;
  for (auto& x : s) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::string accum_label(const Case& c) { return c.accum_dtype ? std::string(dtype_name(*c.accum_dtype)) : "none"; }

}  // namespace

std::string GateGroup::title() const {
  std::string what = base_outcome == "pass" ? "new " + candidate_outcome
                                            : fmt::format("{} (base: {})", candidate_outcome, base_outcome);
  std::string where = oracle.empty() ? "" : oracle;
  if (oracle == "compiled") where += "[" + join(backends, "/") + "]";
  return fmt::format("accum_dtype {}, {}{}: {}", accum, join(dtypes, "/"), where.empty() ? "" : ", " + where, what);
}

std::vector<GateGroup> group_regressions(const std::vector<GateRow>& rows) {
  std::vector<GateGroup> groups;
  for (size_t i = 0; i < rows.size(); ++i) {
    const GateRow& r = rows[i];
    if (!is_regression(r.verdict) || !r.base || !r.candidate) continue;
    const std::string accum = accum_label(r.gc.c), bo = r.base->outcome, co = r.candidate->outcome;
    std::string oracle = oracle_of(co).empty() ? oracle_of(bo) : oracle_of(co);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GateGroup& g) {
      return g.accum == accum && g.oracle == oracle && g.candidate_outcome == co && g.base_outcome == bo;
    });
    if (it == groups.end()) {
      groups.push_back({accum, oracle, co, bo, {}, {}, {}});
      it = groups.end() - 1;
    }
    it->dtypes.insert(dtype_label(r.gc.c));
    it->backends.insert(std::string(name(r.gc.c.compile.backend)));
    it->rows.push_back(i);
  }
  std::stable_sort(groups.begin(), groups.end(), [](auto& a, auto& b) { return a.rows.size() > b.rows.size(); });
  return groups;
}

int GateReport::count(GateVerdict v) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](auto& r) { return r.verdict == v; }));
}
int GateReport::regressions() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](auto& r) { return is_regression(r.verdict); }));
}
int GateReport::judged() const {
  return static_cast<int>(rows.size()) - count(GateVerdict::SKIPPED) - count(GateVerdict::UNSUPPORTED);
}

namespace {

struct Side {
  std::string label;
  GateSpec spec;
  std::string path;  // resolved subject path
  std::string commit;  // git=: the commit REF resolved to
  std::unique_ptr<SubjectWorker> worker;
  SubjectInfo info;
  nlohmann::json contract;  // what the subject declares (contract.py); null: judged under Liger's
  SampleSpace space;        // that contract as cases carry it (case/contract.hpp)
  std::set<std::string> lacks;  // FLCE parameters its callable does not take (params.py)
};

// The side's subject path (git= exported, path= checked): before any interpreter starts, so a
// bad SPEC is refused in no time.
void resolve(Side& s) {
  if (!s.spec.git_repo.empty()) {
    // The commit's tree, exported into the cache (oracles/subject_tree.hpp); the user's
    // checkout is only read. path= is inside the tree; by default src/ (Liger) or the root.
    try {
      SubjectTree t = export_subject_tree(s.spec.git_repo, s.spec.git_ref, s.spec.path);
      s.path = t.subject_path;
      s.commit = t.commit;
    } catch (const SubjectTreeError& e) {
      throw GateSetupError(fmt::format("{} ({}): git={}", s.label, s.spec.text, e.what()));
    }
  } else if (!s.spec.path.empty()) {
    if (!fs::is_directory(s.spec.path)) throw GateSetupError(fmt::format("{}: path={}: no such directory", s.label, s.spec.path));
    s.path = fs::absolute(s.spec.path).string();
  }
}

void prepare(Side& s, double timeout_s) {
  WorkerOptions wo;
  wo.python = s.spec.python;
  wo.timeout_s = timeout_s;
  wo.label = s.label;
  try {
    s.worker = std::make_unique<SubjectWorker>(wo);
  } catch (const std::exception& e) {
    throw GateSetupError(fmt::format("{} ({}): {}", s.label, s.spec.text, e.what()));
  }
  s.info = s.worker->describe(s.spec.subject, s.path);
  if (!s.info.error.empty())
    throw GateSetupError(fmt::format("{}: subject '{}' cannot be loaded: {}", s.label, s.spec.subject, s.info.error));
  if (s.info.flce) {
    const SubjectCapabilities caps = s.worker->capabilities(s.spec.subject, s.path);
    s.contract = caps.contract;
    s.lacks.insert(caps.lacks.begin(), caps.lacks.end());
  }
  apply_contract(s.contract, s.space);
}

std::string fits(const Case& c, const Side& s, bool has_gpu) {
  if (c.is_op() && !s.info.op) return fmt::format("kind {}: {} has no op()", name(c.kind), s.spec.subject);
  if (!c.is_op() && !s.info.flce) return fmt::format("kind flce: {} has no flce()", s.spec.subject);
  if (c.device == Device::CUDA && !has_gpu) return "needs CUDA";
  // A pin made under another subject's contract (a torch-semantics case for a Liger-shaped
  // subject): its expectation and its judgement are that contract's, not this subject's.
  if (std::string m = contract_mismatch(c, s.space); !m.empty())
    return fmt::format("made under another contract than {}'s: {}", s.spec.subject, m);
  return "";
}

std::vector<GateCase> corpus_cases(const std::string& file) {
  std::vector<GateCase> out;
  try {
    for (auto& p : load_expectations(file, false))  // a plain case or a sequence case; subject from the SPEC
      out.push_back({p.pin.case_file, "corpus", p.calls.last(),
                     std::vector<Case>(p.calls.calls.begin(), p.calls.calls.end() - 1), p.pin.expect});
  } catch (const CaseError& e) {
    throw GateSetupError(std::string("--corpus ") + e.what());
  }
  return out;
}

std::vector<Drift> drift_of(const RunReport& b, const RunReport& c) {
  std::vector<Drift> d;
  for (auto& bo : b.oracles) {
    if (!bo.verdict) continue;
    for (auto& co : c.oracles) {
      if (co.oracle != bo.oracle || !co.verdict) continue;
      for (auto& bv : bo.verdict->outputs)
        for (auto& cv : co.verdict->outputs)
          if (bv.output == cv.output) d.push_back({bo.oracle, bv.output, bv.worst_ratio, cv.worst_ratio});
    }
  }
  return d;
}

}  // namespace

GateReport run_gate(const GateOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  GateReport rep;
  rep.opt = opt;
  // Every pinned case is read before a subject host starts: a broken corpus file costs nothing.
  std::vector<std::vector<GateCase>> corpora;
  for (auto& file : opt.corpora) corpora.push_back(corpus_cases(file));
  Side base{"base", opt.base, "", "", nullptr, {}, {}, {}, {}}, cand{"candidate", opt.candidate, "", "", nullptr, {}, {}, {}, {}};
  resolve(base);
  resolve(cand);
  // Two interpreters start (torch import, seconds each) at the same time.
  auto fb = std::async(std::launch::async, [&] { prepare(base, opt.timeout_s); });
  std::exception_ptr cand_err;
  try {
    prepare(cand, opt.timeout_s);
  } catch (...) {
    cand_err = std::current_exception();
  }
  fb.get();
  if (cand_err) std::rethrow_exception(cand_err);
  rep.base_env = base.worker->environment();
  rep.candidate_env = cand.worker->environment();
  rep.base_version = base.info.version;
  rep.candidate_version = cand.info.version;
  rep.base_commit = base.commit;
  rep.candidate_commit = cand.commit;
  for (Side* s : {&base, &cand}) {
    std::string text = "builtin";
    try {
      if (!s->path.empty()) text = identify_subject(s->path, s->commit, "").text();
    } catch (const GitObjectError& e) {  // an unreadable file: no identity, the gate still runs
      text = std::string("unknown: ") + e.what();
    }
    (s == &base ? rep.base_identity : rep.candidate_identity) = text;
  }
  const bool has_gpu = !rep.base_env.gpu.empty() && !rep.candidate_env.gpu.empty();

  auto run_one = [&](const GateCase& gc) {
    GateRow row;
    row.gc = gc;
    auto r0 = std::chrono::steady_clock::now();
    std::string why = fits(gc.c, base, has_gpu);
    if (why.empty()) why = fits(gc.c, cand, has_gpu);
    if (!why.empty()) {
      row.skip_reason = why;
    } else {
      auto side = [&](Side& s) {
        // Hermetic: no compiled function or automatic-dynamic state carried over from
        // earlier cases, so a verdict does not depend on the order cases ran in.
        s.worker->reset();
        RunOptions ro;
        ro.subject = s.spec.subject;
        ro.subject_path = s.path;
        ro.runner = s.worker.get();
        ro.compiled = ro.ladder = opt.compiled;
        Sequence seq{gc.earlier};
        seq.calls.push_back(gc.c);
        return run_sequence(seq, ro).last;  // a plain case: one call
      };
      auto fbase = std::async(std::launch::async, [&] { return side(base); });
      row.candidate = side(cand);
      row.base = fbase.get();
      const Expectation* pin = expectation_here(gc.expect, row.candidate->env.torch, gc.c.device == Device::CUDA);
      row.verdict = gate_verdict(row.base->outcome, row.candidate->outcome, opt.strict_changes, pin ? pin->outcome : "");
      if (row.verdict == GateVerdict::SAME_PASS) row.drift = drift_of(*row.base, *row.candidate);
    }
    row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
    if (opt.progress)
      opt.progress(row.verdict == GateVerdict::SKIPPED
                       ? fmt::format("{}: skipped ({})", gc.id, row.skip_reason)
                       : fmt::format("{}: base {} | candidate {} -> {} ({:.1f} s)", gc.id, row.base->outcome,
                                     row.candidate->outcome, name(row.verdict), row.wall_s));
    rep.rows.push_back(std::move(row));
  };

  for (auto& cases : corpora)
    for (auto& gc : cases) run_one(gc);

  // Sampled cases: the kinds both subjects take (op kinds only for op-only subjects).
  SampleSpace sp;
  sp.compile_options = opt.vary_compile;
  sp.op_kinds = base.info.op && cand.info.op;
  sp.device = opt.cuda ? Device::CUDA : Device::CPU;
  // Drawn under the candidate's contract (the code under review), never Liger's by default; a
  // base that declares another is told apart per case (fits()).
  apply_contract(cand.contract, sp);
  // Nor with a parameter the candidate's callable lacks (every such case would come back
  // unsupported, as a campaign never draws them); one only base lacks is new coverage.
  sp.without = cand.lacks;
  const bool flce_ok = base.info.flce && cand.info.flce;
  auto fitting = [&](const Case& c) { return c.is_op() ? sp.op_kinds : flce_ok; };
  uint64_t k = 0;
  const uint64_t max_draws = 50ull * static_cast<uint64_t>(std::max(opt.sample, 1)) + 1000;
  for (int taken = 0; taken < opt.sample && k < max_draws; ++k) {
    Case c = sample_case(opt.seed, k, sp);
    if (!fitting(c)) continue;
    run_one({fmt::format("sample-{}-{}", opt.seed, k), "sample", c, {}, {}});
    ++taken;
  }
  if (opt.fuzz_minutes > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.fuzz_minutes * 60);
    for (; std::chrono::steady_clock::now() < deadline; ++k) {
      Case c = sample_case(opt.seed, k, sp);
      if (fitting(c)) run_one({fmt::format("sample-{}-{}", opt.seed, k), "fuzz", c, {}, {}});
    }
  }
  rep.groups = group_regressions(rep.rows);
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// ---------------------------------------------------------------- reports

namespace {

std::string config_of(const Case& c) {
  std::string s = fmt::format("{} {}, accum {}", name(c.kind), dtype_label(c), accum_label(c));
  if (!c.is_op()) s += fmt::format(", {}", name(c.reduction));
  s += fmt::format(", {}", name(c.compile.backend));
  if (c.compile.fullgraph) s += " fullgraph";
  if (c.compile.dynamic) s += *c.compile.dynamic ? " dynamic" : " static";
  return s;
}

// An error message in a table cell: bounded (the renderer keeps it on one line).
std::string clip(const std::string& s) { return s.size() > 160 ? s.substr(0, 160) + "…" : s; }

// What the first failing oracle said: the error it matched, or the judge finding.
std::string why_of(const RunReport& r) {
  for (auto& o : r.oracles) {
    if (o.pass() || o.status == SubjectStatus::UNSUPPORTED) continue;
    if (o.signature) return o.signature->matched.empty() ? o.signature->title : o.signature->matched;
    if (o.verdict && o.verdict->first_failure())
      return fmt::format("{} {}: {}", o.verdict->first_failure()->output, name(o.verdict->first_failure()->finding),
                         o.verdict->first_failure()->detail);
  }
  for (auto& o : r.oracles)
    if (o.status == SubjectStatus::UNSUPPORTED) return "unsupported: " + o.reason;
  return "";
}

std::vector<std::pair<const GateRow*, Drift>> notable_drift(const GateReport& r) {
  std::vector<std::pair<const GateRow*, Drift>> v;
  for (auto& row : r.rows)
    for (auto& d : row.drift)
      if (std::fabs(d.candidate - d.base) >= r.opt.drift_report) v.push_back({&row, d});
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) {
    return std::fabs(a.second.candidate - a.second.base) > std::fabs(b.second.candidate - b.second.base);
  });
  return v;
}

nlohmann::ordered_json side_json(const RunReport& r) {
  nlohmann::ordered_json j{{"outcome", r.outcome}, {"first_failing_stage", r.first_failing_stage}};
  auto lad = nlohmann::ordered_json::array();
  for (auto& st : r.ladder) lad.push_back({{"backend", st.backend}, {"pass", st.pass}, {"what", st.what}});
  j["ladder"] = lad;
  for (auto& o : r.oracles)
    if (o.signature) {
      j["signature"] = {{"id", o.signature->id}, {"known", o.signature->known}, {"matched", o.signature->matched},
                        {"innermost_torch_frame", o.signature->innermost_torch_frame}, {"phase", o.phase}};
      break;
    }
  return j;
}

// Cases one side could not run because its subject lacks a parameter they use, per parameter
// (outcome "unsupported-by-subject:<p>[+<p>]"): counted, never regressions or findings.
std::map<std::string, int> lacking(const GateReport& r, bool base) {
  std::map<std::string, int> n;
  for (auto& row : r.rows) {
    const auto& side = base ? row.base : row.candidate;
    if (side)
      for (auto& p : unsupported_params(side->outcome)) ++n[p];
  }
  return n;
}

std::string lacking_text(const std::map<std::string, int>& n) {
  std::string s;
  for (auto& [p, count] : n) s += fmt::format("{}{} ({} case{})", s.empty() ? "" : ", ", md_code(p), count, count == 1 ? "" : "s");
  return s;
}

}  // namespace

std::string gate_markdown(const GateReport& r) {
  const int reg = r.regressions(), fixed = r.count(GateVerdict::FIXED) + r.count(GateVerdict::NEW_PASS);
  Markdown md;
  md.heading(2, fmt::format("flce gate: {} — base {} → candidate {}",
                            reg ? fmt::format("❌ {} regression{}", reg, reg == 1 ? "" : "s") : "✅ no regressions",
                            md_code(r.opt.base.text), md_code(r.opt.candidate.text)));
  int n_corpus = 0, n_sample = 0, n_fuzz = 0;
  for (auto& row : r.rows) (row.gc.source == "corpus" ? n_corpus : row.gc.source == "sample" ? n_sample : n_fuzz)++;
  md.paragraph(fmt::format("{} cases ({} pinned, {} sampled with seed {}{}) · {} judged · {} skipped · {} fixed · {:.0f} s",
                           r.rows.size(), n_corpus, n_sample, r.opt.seed, n_fuzz ? fmt::format(", {} fuzzed", n_fuzz) : "",
                           r.judged(), r.count(GateVerdict::SKIPPED), fixed, r.wall_s));
  for (bool base : {true, false})
    if (auto n = lacking(r, base); !n.empty())
      md.paragraph(fmt::format("{} subject lacks parameters these cases use (unsupported by subject; not regressions): {}",
                               base ? "base" : "candidate", lacking_text(n)));
  md.add(Table{{"", "subject", "version", "identity", "torch", "python"},
               {{"base", md_code(r.opt.base.subject), r.base_version, r.base_identity, r.base_env.torch, r.base_env.python},
                {"candidate", md_code(r.opt.candidate.subject), r.candidate_version, r.candidate_identity,
                 r.candidate_env.torch, r.candidate_env.python}}});
  if (!r.groups.empty()) {
    md.heading(3, "Regressions by configuration");
    Table groups{{"configuration", "cases", "candidate error", "ids"}, {}};
    for (auto& g : r.groups) {
      std::string ids;
      for (size_t i : g.rows) ids += (ids.empty() ? "" : ", ") + md_code(r.rows[i].gc.id);
      groups.row({g.title(), std::to_string(g.rows.size()), clip(why_of(*r.rows[g.rows[0]].candidate)), ids});
    }
    md.add(groups);
    md.heading(3, "Regressed cases");
    Table cases{{"case", "configuration", "base", "candidate", "verdict"}, {}};
    for (auto& row : r.rows)
      if (is_regression(row.verdict))
        cases.row({md_code(row.gc.id), config_of(row.gc.c), md_code(row.base->outcome), md_code(row.candidate->outcome),
                   std::string(name(row.verdict))});
    md.add(cases);
  }
  if (r.count(GateVerdict::STILL_FAILING)) {
    md.heading(3, "Still failing to compile, with another signature (not failing the gate; `--strict-changes` fails it)");
    Table still{{"case", "configuration", "base", "candidate", "candidate error"}, {}};
    for (auto& row : r.rows)
      if (row.verdict == GateVerdict::STILL_FAILING)
        still.row({md_code(row.gc.id), config_of(row.gc.c), md_code(row.base->outcome), md_code(row.candidate->outcome),
                   clip(why_of(*row.candidate))});
    md.add(still);
  }
  if (fixed) {
    md.heading(3, "Fixed (failed on base, pass on candidate)");
    Table fixes{{"case", "configuration", "base"}, {}};
    for (auto& row : r.rows)
      if (row.verdict == GateVerdict::FIXED || row.verdict == GateVerdict::NEW_PASS)
        fixes.row({md_code(row.gc.id), config_of(row.gc.c), md_code(row.base->outcome)});
    md.add(fixes);
  }
  if (r.count(GateVerdict::NEW_COVERAGE)) {
    md.heading(3, "New coverage (the base lacks a parameter these cases use; not failing the gate)");
    Table cov{{"case", "configuration", "base", "candidate"}, {}};
    for (auto& row : r.rows)
      if (row.verdict == GateVerdict::NEW_COVERAGE)
        cov.row({md_code(row.gc.id), config_of(row.gc.c), md_code(row.base->outcome), md_code(row.candidate->outcome)});
    md.add(cov);
  }
  auto drift = notable_drift(r);
  double max_drift = 0;
  for (auto& row : r.rows)
    for (auto& d : row.drift) max_drift = std::max(max_drift, std::fabs(d.candidate - d.base));
  md.heading(3, "Numeric drift inside bounds (not failing)");
  md.paragraph(fmt::format("largest |Δ err/bound| over {} passing cases: {:.3g}", r.count(GateVerdict::SAME_PASS), max_drift));
  if (!drift.empty()) {
    Table t{{"case", "oracle", "output", "base err/bound", "candidate err/bound"}, {}};
    for (size_t i = 0; i < drift.size() && i < 10; ++i)
      t.row({md_code(drift[i].first->gc.id), drift[i].second.oracle, drift[i].second.output,
             fmt::format("{:.3g}", drift[i].second.base), fmt::format("{:.3g}", drift[i].second.candidate)});
    md.add(t);
  }
  Details rest{"Unchanged and skipped cases", {{"case", "verdict", "outcome"}, {}}};
  for (auto& row : r.rows)
    if (!is_regression(row.verdict) && row.verdict != GateVerdict::FIXED && row.verdict != GateVerdict::NEW_PASS &&
        row.verdict != GateVerdict::STILL_FAILING && row.verdict != GateVerdict::NEW_COVERAGE)
      rest.table.row({md_code(row.gc.id), std::string(name(row.verdict)),
                      row.verdict == GateVerdict::SKIPPED ? row.skip_reason : md_code(row.base->outcome)});
  if (!rest.table.rows.empty()) md.add(rest);
  return render_markdown(md);
}

nlohmann::ordered_json gate_json(const GateReport& r) {
  nlohmann::ordered_json j;
  auto spec = [](const GateSpec& s, const Environment& e, const std::string& v, const std::string& commit,
                 const std::string& identity) {
    return nlohmann::ordered_json{{"spec", s.text}, {"subject", s.subject}, {"path", s.path}, {"python", s.python},
                                  {"git", s.git_repo.empty() ? "" : s.git_repo + "@" + s.git_ref}, {"git_commit", commit},
                                  {"subject_version", v}, {"identity", identity},
                                  {"environment", nlohmann::ordered_json::parse(e.to_json())}};
  };
  j["base"] = spec(r.opt.base, r.base_env, r.base_version, r.base_commit, r.base_identity);
  j["candidate"] = spec(r.opt.candidate, r.candidate_env, r.candidate_version, r.candidate_commit, r.candidate_identity);
  j["summary"] = {{"cases", r.rows.size()}, {"judged", r.judged()}, {"regressions", r.regressions()},
                  {"fixed", r.count(GateVerdict::FIXED) + r.count(GateVerdict::NEW_PASS)},
                  {"still_failing", r.count(GateVerdict::STILL_FAILING)}, {"strict_changes", r.opt.strict_changes},
                  {"skipped", r.count(GateVerdict::SKIPPED)}, {"seed", r.opt.seed}, {"wall_s", r.wall_s}};
  auto groups = nlohmann::ordered_json::array();
  for (auto& g : r.groups) {
    auto ids = nlohmann::ordered_json::array();
    for (size_t i : g.rows) ids.push_back(r.rows[i].gc.id);
    groups.push_back({{"title", g.title()}, {"accum_dtype", g.accum}, {"oracle", g.oracle},
                      {"dtypes", g.dtypes}, {"backends", g.backends}, {"base_outcome", g.base_outcome},
                      {"candidate_outcome", g.candidate_outcome}, {"cases", ids}});
  }
  j["regression_groups"] = groups;
  j["summary"]["new_coverage"] = r.count(GateVerdict::NEW_COVERAGE);
  j["summary"]["unsupported_by_subject"] = {{"base", lacking(r, true)}, {"candidate", lacking(r, false)}};
  auto cases = nlohmann::ordered_json::array();
  for (auto& row : r.rows) {
    nlohmann::ordered_json c{{"id", row.gc.id}, {"source", row.gc.source}, {"verdict", name(row.verdict)},
                             {"case", nlohmann::ordered_json::parse(to_json(row.gc.c, -1))}, {"wall_s", row.wall_s}};
    if (row.verdict == GateVerdict::SKIPPED) c["skip_reason"] = row.skip_reason;
    if (row.base) c["base"] = side_json(*row.base);
    if (row.candidate) c["candidate"] = side_json(*row.candidate);
    auto d = nlohmann::ordered_json::array();
    for (auto& x : row.drift)
      d.push_back({{"oracle", x.oracle}, {"output", x.output}, {"base", x.base}, {"candidate", x.candidate}});
    if (!d.empty()) c["err_over_bound"] = d;
    cases.push_back(c);
  }
  j["cases"] = cases;
  return j;
}

std::string gate_junit(const GateReport& r) {
  JUnitSuite suite{"flce gate " + r.opt.base.text + " -> " + r.opt.candidate.text, r.wall_s, {}};
  for (auto& row : r.rows) {
    JUnitCase c{"flce.gate." + row.gc.source, row.gc.id, row.wall_s, JUnitPass{}};
    if (row.verdict == GateVerdict::SKIPPED) {
      c.result = JUnitSkipped{row.skip_reason};
    } else if (is_regression(row.verdict)) {
      std::string detail = config_of(row.gc.c);
      for (auto& o : row.candidate->oracles)
        if (o.signature) detail += "\n" + o.signature->id + ": " + o.signature->matched;
      c.result = JUnitFailure{std::string(name(row.verdict)),
                              fmt::format("{}: base {} -> candidate {}", name(row.verdict), row.base->outcome,
                                          row.candidate->outcome),
                              detail};
    } else {
      c.result = JUnitPass{fmt::format("{}: base {} | candidate {}", name(row.verdict), row.base->outcome,
                                       row.candidate->outcome)};
    }
    suite.cases.push_back(std::move(c));
  }
  return render_junit({{suite}});
}

}  // namespace flce
