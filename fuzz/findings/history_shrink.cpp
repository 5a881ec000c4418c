#include "fuzz/findings/history_shrink.hpp"

#include <chrono>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fuzz/findings/call_history.hpp"
#include "fuzz/findings/ddmin.hpp"
#include "repro/emit_python.hpp"
#include "fuzz/findings/minimize.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

Sequence with_last(const std::vector<Case>& earlier, const Case& last, SequenceScope scope) {
  Sequence s{earlier, scope};
  s.calls.push_back(last);
  return s;
}

}  // namespace

HistoryShrinkResult shrink_history(const std::vector<Case>& earlier, const Case& last, SequenceScope scope,
                                   const std::string& signature, const HistoryShrinkOptions& o) {
  const auto t0 = Clock::now();
  auto left = [&] { return o.budget_s - std::chrono::duration<double>(Clock::now() - t0).count(); };
  HistoryShrinkResult r;
  r.history_calls = earlier.size();
  auto run = [&](const Sequence& s) {
    ++r.runs;
    return o.outcome(s);
  };
  auto log = [&](const std::string& l) {
    if (o.log) o.log(l);
  };
  // A call that would leave the compiled function is never a candidate (scope compiled).
  const std::string key = compiled_key(last);
  auto same_function = [&](const Case& k) { return scope == SequenceScope::PROCESS || compiled_key(k) == key; };

  r.replayed = run(with_last(earlier, last, scope));
  log(fmt::format("history of {} earlier calls replayed: {}", earlier.size(), r.replayed));
  if (r.replayed != signature) return r;
  r.reproduced = true;

  // 1. Which earlier calls are needed (ddmin), in their order.
  DdminStats ds;
  std::vector<Case> prefix = ddmin<Case>(
      earlier, [&](const std::vector<Case>& sub) { return run(with_last(sub, last, scope)) == signature; },
      [&] { return left() <= 0; }, &ds);
  log(fmt::format("ddmin: {} -> {} earlier calls in {} runs", earlier.size(), prefix.size(), ds.tests));
  bool fixed = !ds.budget_hit;

  // 2. The last call, the earlier ones fixed; 3. each earlier call, the rest fixed.
  auto shrink_call = [&](Case c, const std::function<Sequence(const Case&)>& seq) {
    if (left() <= 0) {
      fixed = false;
      return c;
    }
    MinimizeOptions mo;
    mo.budget_s = left();
    mo.outcome = [&](const Case& k) {
      if (!same_function(k)) return std::string("rejected: another compiled function");
      ++r.runs;
      return o.outcome(seq(k));
    };
    mo.log = o.log;
    try {
      MinimizeResult m = minimize(c, mo);
      if (m.outcome != signature) return c;  // flaky: keep the call as it was
      fixed = fixed && m.fixed_point;
      return m.minimized;
    } catch (const CaseError&) {  // the fixed rest no longer shows it: keep the call
      return c;
    }
  };
  Case last_min = shrink_call(last, [&](const Case& k) { return with_last(prefix, k, scope); });
  for (size_t i = 0; i < prefix.size(); ++i)
    prefix[i] = shrink_call(prefix[i], [&](const Case& k) {
      std::vector<Case> p = prefix;
      p[i] = k;
      return with_last(p, last_min, scope);
    });
  r.minimized = with_last(prefix, last_min, scope);
  r.fixed_point = fixed;
  return r;
}

std::string shrink_lost_finding(const fs::path& fdir, const Case& c, const std::string& signature,
                                const std::string& lost, const SequenceFindingOptions& o, int* runs) {
  nlohmann::json history;
  {
    std::ifstream f(fdir / "report.json");
    std::stringstream ss;
    ss << f.rdbuf();
    const nlohmann::json rep = nlohmann::json::parse(ss.str(), nullptr, false);
    if (!rep.is_discarded() && rep.is_object() && rep.contains("history")) history = rep["history"];
  }
  std::vector<SequenceScope> scopes{SequenceScope::COMPILED};
  if (o.cuda_poisoned) scopes.push_back(SequenceScope::PROCESS);
  std::string why;
  for (SequenceScope scope : scopes) {
    const std::vector<Case> earlier = history_calls(history, scope);
    const char* what = scope == SequenceScope::PROCESS ? "process" : "compiled function";
    if (earlier.empty()) {
      why += fmt::format("; no earlier calls on its {}", what);
      continue;
    }
    HistoryShrinkResult r = shrink_history(earlier, c, scope, signature, o.shrink);
    *runs += r.runs;
    if (!r.reproduced) {
      why += fmt::format("; its {} earlier calls on its {} replayed: {}", earlier.size(), what, r.replayed);
      continue;
    }
    write_atomic(fdir / "minimized.json", to_json(r.minimized, 2) + "\n");
    EmitSpec spec{r.minimized.last(), o.subject, o.subject_path, (fdir / "minimized.json").string(),
                  {{"", "any", signature}}, o.signatures_json};
    const std::vector<Case> before(r.minimized.calls.begin(), r.minimized.calls.end() - 1);
    write_atomic(fdir / "repro.py", emit_python(spec, before, scope == SequenceScope::PROCESS ? "process" : "compiled"));
    return fmt::format("minimized-sequence: {} calls (of {}{}; alone: {})", r.minimized.calls.size(),
                       r.history_calls + 1, r.fixed_point ? "" : ", budget", lost);
  }
  return lost + (why.empty() ? "" : " (history" + why + ")");
}

}  // namespace flce
