#include "judge/differential.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "oracles/subject_worker.hpp"

#include <fmt/format.h>

#include "oracles/golden.hpp"
#include "case/sampler.hpp"
#include "judge/summary.hpp"

namespace flce {

namespace {

constexpr Backend kLadder[] = {Backend::EAGER, Backend::AOT_EAGER, Backend::AOT_EAGER_DECOMP_PARTITION, Backend::INDUCTOR};

OracleOutcome outcome_of(const std::string& oracle, const std::string& backend, const SubjectResult& r, const Case& c,
                         const Outputs& gold, const Bounds& bounds, const Outputs* eager, const SignatureTable& sigs,
                         const std::string& torch_version) {
  OracleOutcome o;
  o.oracle = oracle;
  o.backend = backend;
  o.status = r.status;
  o.reason = r.reason;
  o.unsupported_params = r.unsupported_params;
  o.phase = r.phase;
  o.paths = r.paths;
  o.wall_ms = r.wall_ms;
  o.transfer_ms = r.transfer_ms;
  if (r.status == SubjectStatus::OK) {
    JudgeOptions jo;
    jo.dtype_reference = eager;
    o.verdict = judge(oracle, c, gold, bounds, r.outputs, jo);
    if (eager) o.vs_eager = relative_disagreement(r.outputs, *eager, bounds, nullptr);
  } else if (r.status == SubjectStatus::ERROR) {
    o.signature = sigs.classify(r.chain, torch_version);
    // Eager on a device with no kernel for the op cannot show anything about the
    // subject: typed "unsupported here", with the reason, never a finding or a pass.
    if (o.signature->id == "op-not-implemented-on-device" && backend.empty()) {
      o.status = SubjectStatus::UNSUPPORTED;
      o.reason = "no kernel here: " + o.signature->matched;
    }
  }
  return o;
}

std::string failure_word(const OracleOutcome& o) {
  if (o.status == SubjectStatus::ERROR) return o.signature ? o.signature->id : "error";
  if (o.status == SubjectStatus::UNSUPPORTED) return "unsupported";
  if (o.verdict && !o.verdict->pass()) {
    auto* f = o.verdict->first_failure();
    return fmt::format("judge:{}:{}", f->output, name(f->finding));
  }
  return "ok";
}

// The three-way verdict of one out-of-bounds output: errors per oracle (null: did not run).
void add_blame(nlohmann::ordered_json& out, const Blame& b) {
  nlohmann::ordered_json by;
  by[b.oracle] = b.ratio;
  by[b.against] = b.against_ran ? nlohmann::ordered_json(b.against_ratio) : nlohmann::ordered_json();
  out["err_over_bound_by_oracle"] = by;
  if (b.against_ran) out["against_finding"] = b.against_finding;
  out["guilty"] = b.guilty;
  out["verdict"] = b.line;
}

}  // namespace

bool RunReport::all_pass() const {
  for (auto& o : oracles)
    if (!o.pass()) return false;
  return !oracles.empty();
}
bool RunReport::unsupported() const {
  for (auto& o : oracles)
    if (o.status != SubjectStatus::UNSUPPORTED) return false;
  return !oracles.empty();
}

std::string LadderMemo::key(const Case& c, const std::string& signature) { return graph_key(c) + "|" + signature; }
std::string LadderMemo::any_graph(const std::string& signature) { return "*|" + signature; }

namespace {

// Adds the wall time of fn() to *ms.
template <class F>
auto timed(double* ms, F&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  struct Add {
    double* ms;
    std::chrono::steady_clock::time_point t0;
    ~Add() { *ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
  } add{ms, t0};
  return fn();
}

}  // namespace

RunReport run_case(const Case& c, const RunOptions& opt_in) {
  RunOptions opt = opt_in;
  if (!opt.runner) opt.runner = &default_subject_worker();
  validate(c);
  RunReport rep;
  rep.c = c;
  rep.subject = opt.subject;
  auto stage = [&](const std::string& s) {
    if (opt.on_stage) opt.on_stage(s);
  };
  RunTiming& tm = rep.timing;
  stage("golden");
  Inputs in = timed(&tm.inputs_ms, [&] { return make_inputs(c); });
  rep.golden = timed(&tm.golden_ms, [&] { return golden(c, in); });
  Bounds bounds = timed(&tm.judge_ms, [&] { return compute_bounds(c, in); });
  auto run_subject = [&](const std::string& mode, const std::optional<Backend>& b, double* ms) {
    SubjectResult r = timed(ms, [&] { return opt.runner->run(c, in, opt.subject, mode, b, opt.subject_path); });
    tm.transfer_ms += r.transfer_ms;
    if (mode == "compiled") ++tm.compiled_runs;
    return r;
  };
  auto outcome_of = [&](auto&&... args) { return timed(&tm.judge_ms, [&] { return flce::outcome_of(args...); }); };
  static const SignatureTable sigs = SignatureTable::load_default();
  const std::string tv = opt.runner->torch_version();
  rep.env = opt.runner->environment();

  std::optional<SubjectResult> eager;
  if (opt.eager) {
    stage("eager");
    eager = run_subject("eager", std::nullopt, &tm.eager_ms);
    rep.subject_version = eager->subject_version;
    rep.oracles.push_back(outcome_of("eager", "", *eager, c, rep.golden, bounds, nullptr, sigs, tv));
    if (!eager->died.empty()) rep.subject_died = eager->died + "@eager";
  }
  auto stopped = [&] { return opt.stop_when_subject_dies && !rep.subject_died.empty(); };
  const Outputs* eager_out = eager && eager->status == SubjectStatus::OK ? &eager->outputs : nullptr;
  if (opt.compiled && !stopped()) {
    stage(fmt::format("compiled:{}", name(c.compile.backend)));
    SubjectResult comp = run_subject("compiled", c.compile.backend, &tm.compile_ms);
    if (!comp.died.empty() && rep.subject_died.empty())
      rep.subject_died = fmt::format("{}@compiled:{}", comp.died, name(c.compile.backend));
    if (rep.subject_version.empty()) rep.subject_version = comp.subject_version;
    OracleOutcome co = outcome_of("compiled", std::string(name(c.compile.backend)), comp, c, rep.golden, bounds,
                                  eager_out, sigs, tv);
    rep.oracles.push_back(co);
    // Walk the ladder: the first backend that breaks separates Dynamo, AOTAutograd,
    // decompositions and Inductor lowering.
    std::string memo_key;
    // Wrong values walk as errors do (once per graph and failure, off the lane in a campaign):
    // each rung is a whole trace, and a rung can hang where the compiled run did not.
    const bool failed = co.status == SubjectStatus::ERROR || (co.verdict && !co.verdict->pass());
    if (failed) rep.ladder_signature = failure_word(co);
    // A known signature (signatures.json) breaks at one stage whatever the graph: its ladder is
    // walked once per campaign (LadderMemo::any_graph); an unknown one once per graph.
    // A known catch-all (signatures.json "generic") lumps different bugs: walked per graph, as unknown.
    const bool known = co.signature && co.signature->shares_ladder();
    if (opt.ladder && opt.ladder_memo && failed)
      memo_key = known ? LadderMemo::any_graph(rep.ladder_signature) : LadderMemo::key(c, rep.ladder_signature);
    // No memo (opt.ladder_memo null) leaves memo_key empty: never touch the memo then.
    const LadderMemo::Entry* memo = nullptr;
    if (!memo_key.empty()) {
      auto& e = opt.ladder_memo->entries;
      auto it = e.find(memo_key);
      if (it == e.end() && known) it = e.find(LadderMemo::key(c, rep.ladder_signature));  // walked for this graph
      if (it != e.end()) memo = &it->second;
    }
    // A CUDA fault leaves the process's context unusable: every rung would fail on it, so the
    // fault stays with the backend that raised it, unwalked (and never shared: it says nothing
    // about the other graphs).
    const bool context_lost = co.status == SubjectStatus::ERROR && co.signature &&
                              cuda_context_lost(co.signature->matched + "\n" + co.signature->title + "\n" + co.reason);
    if (context_lost) memo_key.clear(), memo = nullptr;
    std::optional<LadderMemo::Entry> gated;  // a ladder another worker walked meanwhile
    bool deferred = false;                   // or one the campaign walks later, off this lane
    if (!context_lost && !memo && opt.ladder && opt.ladder_gate && failed && !stopped()) {
      gated = opt.ladder_gate(rep.ladder_signature, known);
      if (gated && gated->deferred) {
        deferred = true;
        gated.reset();
      } else if (gated) {
        if (!memo_key.empty()) opt.ladder_memo->entries[memo_key] = *gated;
        memo = &*gated;
      }
    }
    if (context_lost || deferred) {
      // Not walked here: the compiled run's own rung is the stage it is known at so far.
      rep.ladder.push_back({std::string(name(c.compile.backend)), false, failure_word(co)});
      rep.first_failing_stage = std::string(name(c.compile.backend));
      rep.ladder_deferred = deferred;
    } else if (memo) {
      rep.ladder = memo->ladder;
      rep.first_failing_stage = memo->first_failing_stage;
      rep.ladder_memoized = true;
      if (opt.ladder_memo) ++opt.ladder_memo->hits;
    } else if (opt.ladder && !co.pass() && co.status != SubjectStatus::UNSUPPORTED && !stopped()) {
      // The stage reported is the first backend that shows the *same* failure as the
      // compiled run; a backend failing differently (e.g. an op with no CPU kernel under
      // the eager backends) is listed but does not claim the stage. The walk stops there:
      // the rungs above it are not needed for the stage, and each costs a whole trace
      // (time to first finding). The compiled run's own rung is always listed.
      const std::string want = failure_word(co);
      std::string first_any;
      for (Backend b : kLadder) {
        OracleOutcome step;
        if (b == c.compile.backend) {
          step = co;
        } else {
          stage(fmt::format("ladder:{}", name(b)));
          SubjectResult r = run_subject("compiled", b, &tm.ladder_ms);
          step = outcome_of(fmt::format("compiled[{}]", name(b)), std::string(name(b)), r, c, rep.golden, bounds,
                            eager_out, sigs, tv);
        }
        rep.ladder.push_back({std::string(name(b)), step.pass(), failure_word(step)});
        if (!step.pass() && first_any.empty()) first_any = std::string(name(b));
        if (!step.pass() && failure_word(step) == want) {
          rep.first_failing_stage = std::string(name(b));
          break;
        }
      }
      if (rep.ladder.back().backend != name(c.compile.backend))
        rep.ladder.push_back({std::string(name(c.compile.backend)), co.pass(), failure_word(co)});
      if (rep.first_failing_stage.empty()) rep.first_failing_stage = first_any;
      if (!memo_key.empty()) opt.ladder_memo->entries[memo_key] = {rep.ladder, rep.first_failing_stage};
    }
  }
  for (auto& extra : opt.extra_oracles) {
    const std::string& oname = extra.first;  // (not a structured binding: lambdas below capture it)
    const auto& fn = extra.second;
    OracleOutcome o;
    o.oracle = oname;
    std::optional<Outputs> out;
    try {
      out = timed(&tm.reference_ms, [&] { return fn(c); });
    } catch (const std::exception& e) {
      o.status = SubjectStatus::ERROR;
      o.signature = sigs.classify({ErrorLink{"flce.OracleError", e.what(), {}}}, tv);
      rep.oracles.push_back(o);
      continue;
    }
    if (!out) {
      o.status = SubjectStatus::UNSUPPORTED;
      o.reason = oname + " cannot run here";
    } else {
      o.status = SubjectStatus::OK;
      timed(&tm.judge_ms, [&] {
        o.verdict = judge(oname, c, rep.golden, bounds, *out);
        if (eager_out) o.vs_eager = relative_disagreement(*out, *eager_out, bounds, nullptr);
        return 0;
      });
    }
    rep.oracles.push_back(o);
  }
  {
    std::vector<const OracleVerdict*> verdicts;
    for (auto& o : rep.oracles)
      if (o.verdict) verdicts.push_back(&*o.verdict);
    rep.blames = blame(verdicts);
  }
  // Outcome line: a dead subject process; else a parameter the subject lacks (the case says
  // nothing about the subject, whatever another oracle did); else the first failing oracle.
  std::vector<std::string> lacks;
  for (auto& o : rep.oracles)
    for (auto& p : o.unsupported_params)
      if (std::find(lacks.begin(), lacks.end(), p) == lacks.end()) lacks.push_back(p);
  rep.outcome = "pass";
  if (!rep.subject_died.empty()) {
    rep.outcome = "crash:" + rep.subject_died;
  } else if (!lacks.empty()) {
    rep.outcome = std::string(kUnsupportedBySubject);
    for (size_t i = 0; i < lacks.size(); ++i) rep.outcome += (i ? "+" : "") + lacks[i];
  } else if (rep.unsupported()) {
    rep.outcome = "unsupported";
  } else {
    for (auto& o : rep.oracles) {
      if (o.pass() || o.status == SubjectStatus::UNSUPPORTED) continue;
      std::string stage = o.oracle == "compiled" && !rep.first_failing_stage.empty() ? rep.first_failing_stage : o.backend;
      if (o.status == SubjectStatus::ERROR)
        rep.outcome = fmt::format("{}@{}:{}", o.signature ? o.signature->id : "error", o.oracle, stage.empty() ? "-" : stage);
      else
        rep.outcome = fmt::format("{}@{}", failure_word(o), o.oracle);
      break;
    }
  }
  return rep;
}

std::string report_table(const RunReport& r) {
  std::string s = fmt::format("case {} | subject {} {} | torch {} | {}\n", name(r.c.kind), r.subject, r.subject_version,
                              r.env.torch, r.env.gpu.empty() ? "cpu" : r.env.gpu);
  s += fmt::format("{:<26} {:<12} {:<16} {:>10} {:>10} {:>9} {:>11} {:>9}  {}\n", "oracle", "status", "output", "max_abs",
                   "max_ulp", "rel_fro", "err/bound", "vs_eager", "detail");
  for (auto& o : r.oracles) {
    std::string oracle = o.oracle + (o.backend.empty() ? "" : "(" + o.backend + ")");
    if (o.status == SubjectStatus::UNSUPPORTED) {
      s += fmt::format("{:<26} {:<12} {}\n", oracle, "unsupported", o.reason);
      continue;
    }
    if (o.status == SubjectStatus::ERROR) {
      const Signature& sg = *o.signature;
      s += fmt::format("{:<26} {:<12} {} [{}{}] {}\n", oracle, "error", sg.id, sg.known ? "known" : "new bucket",
                       sg.expected_here ? (*sg.expected_here ? ", expected on this torch" : ", NOT expected on this torch") : "",
                       sg.matched.substr(0, 160));
      if (!sg.innermost_torch_frame.empty()) s += fmt::format("{:<26} {:<12} innermost torch frame: {}\n", "", "", sg.innermost_torch_frame);
      continue;
    }
    for (auto& v : o.verdict->outputs) {
      const bool approx = v.finding == Flaw::OK && v.n_approximated > 0;
      s += fmt::format("{:<26} {:<12} {:<16} {:>10.3g} {:>10.3g} {:>9.2e} {:>11.3g} {:>9}  {}\n", oracle,
                       approx ? "approx" : v.finding == Flaw::OK ? "ok" : "FAIL:" + std::string(name(v.finding)), v.output,
                       v.max_abs_err, v.max_ulp, v.rel_fro, v.worst_ratio, o.vs_eager >= 0 ? fmt::format("{:.3g}", o.vs_eager) : "-",
                       approx ? fmt::format("within the declared approximation: {} elements beyond the exact bound "
                                            "(up to {:.3g}x), none beyond its allowance", v.n_approximated, v.approx_ratio)
                              : v.detail);
      oracle = "";
    }
  }
  for (auto& b : r.blames) s += fmt::format("verdict {} {}: {}\n", b.oracle, b.output, b.line);
  if (!r.ladder.empty()) {
    s += "backend ladder:";
    for (auto& st : r.ladder) s += fmt::format(" {}={}", st.backend, st.pass ? "ok" : st.what);
    s += fmt::format("\nfirst failing stage: {}{}\n", r.first_failing_stage.empty() ? "none" : r.first_failing_stage,
                     r.ladder_memoized   ? " (ladder of an earlier case with this graph, shape and error)"
                     : r.ladder_deferred ? " (so far: the campaign walks the ladder after the verdict)"
                                         : "");
  }
  s += "outcome: " + r.outcome + "\n";
  if (r.c.grad_filter_eps > 0)
    s += fmt::format("declared approximation: gradient entries with |softmax - onehot| < {:.3g} may be dropped "
                     "(judge/MATH.md, \"Declared approximations\")\n", r.c.grad_filter_eps);
  return s;
}

nlohmann::ordered_json report_json(const RunReport& r) {
  nlohmann::ordered_json j;
  j["case"] = nlohmann::ordered_json::parse(to_json(r.c, -1));
  j["subject"] = r.subject;
  j["subject_version"] = r.subject_version;
  j["environment"] = nlohmann::ordered_json::parse(r.env.to_json());
  j["outcome"] = r.outcome;
  j["first_failing_stage"] = r.first_failing_stage;
  if (r.ladder_memoized) j["ladder_memoized"] = true;
  if (r.ladder_deferred) j["ladder_deferred"] = true;
  if (!r.ladder_signature.empty()) j["ladder_signature"] = r.ladder_signature;
  const RunTiming& t = r.timing;
  j["timing"] = {{"inputs_ms", t.inputs_ms},   {"golden_ms", t.golden_ms},     {"judge_ms", t.judge_ms},
                 {"eager_ms", t.eager_ms},     {"compile_ms", t.compile_ms},   {"ladder_ms", t.ladder_ms},
                 {"reference_ms", t.reference_ms}, {"transfer_ms", t.transfer_ms}, {"compiled_runs", t.compiled_runs}};
  if (!r.subject_died.empty()) j["subject_died"] = r.subject_died;
  auto oracles = nlohmann::ordered_json::array();
  for (auto& o : r.oracles) {
    nlohmann::ordered_json oj;
    oj["oracle"] = o.oracle;
    oj["backend"] = o.backend;
    oj["status"] = name(o.status);
    oj["wall_ms"] = o.wall_ms;
    oj["transfer_ms"] = o.transfer_ms;
    oj["paths"] = o.paths;
    if (!o.reason.empty()) oj["reason"] = o.reason;
    if (!o.unsupported_params.empty()) oj["unsupported_params"] = o.unsupported_params;
    if (o.signature) {
      oj["signature"] = {{"id", o.signature->id}, {"known", o.signature->known}, {"title", o.signature->title},
                         {"matched", o.signature->matched}, {"innermost_torch_frame", o.signature->innermost_torch_frame},
                         {"upstream", o.signature->upstream}, {"phase", o.phase}};
      if (o.signature->expected_here) oj["signature"]["expected_here"] = *o.signature->expected_here;
      if (o.signature->generic) oj["signature"]["generic"] = true;
    }
    if (o.verdict) {
      oj["pass"] = o.verdict->pass();
      oj["vs_eager"] = o.vs_eager;
      auto outs = nlohmann::ordered_json::array();
      for (auto& v : o.verdict->outputs) {
        outs.push_back({{"output", v.output}, {"finding", name(v.finding)}, {"dtype", dtype_name(v.dtype)},
                        {"max_abs_err", v.max_abs_err}, {"max_ulp", v.max_ulp}, {"rel_fro", v.rel_fro},
                        {"err_over_bound", v.worst_ratio}, {"bound_at_worst", v.bound_at_worst}, {"detail", v.detail}});
        if (v.n_approximated)  // within the declared approximation only (Bounds::approx)
          outs.back()["approximated"] = {{"elements", v.n_approximated}, {"err_over_exact_bound", v.approx_ratio}};
        for (auto& b : r.blames)
          if (b.oracle == o.oracle && b.output == v.output) add_blame(outs.back(), b);
      }
      for (size_t k = 0; k < outs.size(); ++k) {  // the worst element, for flce report's observed vs expected
        const auto& v = o.verdict->outputs[k];
        if (v.worst_index < 0) continue;
        auto num = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(fmt::format("{}", x)); };
        outs[k]["worst_index"] = v.worst_index;
        outs[k]["got_at_worst"] = num(v.got_at_worst);
        outs[k]["fp64_at_worst"] = num(v.golden_at_worst);
        outs[k]["n_out_of_bounds"] = v.n_out_of_bounds + v.nonfinite_mismatches;
      }
      oj["outputs"] = outs;
    }
    oracles.push_back(oj);
  }
  j["oracles"] = oracles;
  // Outputs that pass only by the subject's declared approximation: "<oracle>:<output>".
  auto approx = nlohmann::ordered_json::array();
  for (auto& o : r.oracles)
    if (o.verdict && o.verdict->approximated())
      for (auto& v : o.verdict->outputs)
        if (v.n_approximated) approx.push_back(o.oracle + ":" + v.output);
  if (!approx.empty()) j["approximated"] = approx;
  auto lad = nlohmann::ordered_json::array();
  for (auto& st : r.ladder) lad.push_back({{"backend", st.backend}, {"pass", st.pass}, {"what", st.what}});
  j["ladder"] = lad;
  j["golden"] = summary_json(r.golden);
  return j;
}

}  // namespace flce
