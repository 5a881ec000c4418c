// `flce worker`: the isolated side of a campaign. Protocol (one JSON object per line):
//   in : {"key": K, "case": {...}, "lane": L, "ladders": [...], "ladder": B}   lane: eager | compiled (default);
//        ladder false: no backend ladder (the analysis of a finding only asks whether it still fails);
//        ladder_gate true: before a walk no memo answers, the worker asks and waits:
//          out {"key": K, "ladder_query": SIG, "known": B}  in {"key": K, "ladder_answer": {"walk": B, "ladder", ...}}
//          ({"defer": true}: do not walk; the campaign walks it after the verdict, off the lane)
//        ladders: the campaign's known ladders for this case's graph (lanes.hpp, ladders_for)
//        or {"key": K, "sequence": {sequence case}, ...} (earlier calls first, same process: the
//        shrinker's replay of a history; the outcome is the last call's)
//   out: {"ready": true, "environment": {...},         once Python and torch are up; startup_ms: per step; capabilities:
//         "capabilities": {"known": B, "params": [...],   the FLCE parameters the subject's callable
//                          "lacks": [...], "callable": C}  takes (its signature; known false: unread)
//        {"ready": false, "bad_input": true, "why": W} unknown subject
//        {"key": K, "stage": S}                        before each step (golden, eager, compiled:..)
//        {"key": K, "outcome": O, "report": {...}, "wall_ms": T, "cuda_poisoned": B, "subject_died": B,
//         "history": H}  H (findings only): the calls before it (fuzz/findings/call_history.hpp)
//        {"key": K, "bad_input": true, "why": W}        a plug-in that cannot be imported
// Anything Python or torch prints goes to stderr: the protocol owns a private copy of stdout.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>

#include "fuzz/findings/call_history.hpp"
#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/lane_oracles.hpp"
#include "judge/differential.hpp"
#include "judge/sequence_run.hpp"
#include "oracles/subject_worker.hpp"
#include "process/stacks.hpp"

namespace flce {

namespace {

int g_proto = -1;

void emit(const nlohmann::json& j) {
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t n = ::write(g_proto, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) std::_Exit(0);  // the campaign is gone
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

// The plug-in itself cannot be imported (as `flce run` tells it: exit 2).
std::optional<std::string> plugin_import_failure(const RunReport& r) {
  for (auto& o : r.oracles)
    if (o.status == SubjectStatus::ERROR && o.phase == "setup" && o.signature &&
        o.signature->title.find("ModuleNotFoundError") != std::string::npos)
      return "subject '" + r.subject + "' cannot be imported: " + o.signature->matched;
  return std::nullopt;
}

}  // namespace

int serve_worker(const CampaignWorkerOptions& o) {
  g_proto = ::dup(1);
  ::dup2(2, 1);
  // Die with the campaign (even on its kill -9), instead of running a hung case forever.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 0;
  // The campaign asks for a hung case's stacks with this signal; it means the subject host.
  forward_stack_requests();
  if (o.mem_gib > 0) {
    // RLIMIT_DATA, not RLIMIT_AS: CUDA reserves huge PROT_NONE ranges that AS would count.
    rlimit rl{};
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(o.mem_gib * 1024 * 1024 * 1024);
    ::setrlimit(RLIMIT_DATA, &rl);
  }
  {
    // Ask the subject host once whether it can load the subject (a plug-in's import is judged
    // per case), before announcing the worker ready.
    // Where a worker's start-up goes (time to first finding includes it): ms per step, in the ready line.
    auto since = [t = std::chrono::steady_clock::now()]() mutable {
      const auto now = std::chrono::steady_clock::now();
      const double ms = std::chrono::duration<double, std::milli>(now - t).count();
      t = now;
      return std::round(ms);
    };
    nlohmann::json startup = nlohmann::json::object();
    SubjectWorker& host = default_subject_worker();
    std::string why;
    if (!known_subject(o.subject, &why)) {
      emit({{"ready", false}, {"bad_input", true}, {"why", why}});
      return 2;
    }
    SubjectInfo info;
    if (o.subject.find(':') == std::string::npos) info = host.describe(o.subject, o.subject_path);
    startup["describe"] = since();  // the host's start: Python, torch, the subject's import
    if (!info.error.empty()) {
      emit({{"ready", false}, {"bad_input", true}, {"why", "subject '" + o.subject + "': " + info.error}});
      return 2;
    }
    // What the subject's callable takes: the campaign stops drawing cases it lacks parameters for.
    const SubjectCapabilities caps = host.capabilities(o.subject, o.subject_path);
    startup["capabilities"] = since();
    nlohmann::json cj{{"known", caps.known}};
    if (caps.known) {
      cj["params"] = caps.params;
      cj["lacks"] = caps.lacks;
      cj["callable"] = caps.callable;
      cj["contract"] = caps.contract;
    } else if (!caps.error.empty()) {
      cj["error"] = caps.error;
    }
    nlohmann::json env = nlohmann::json::parse(host.environment().to_json());
    startup["environment"] = since();  // the CUDA context
    emit({{"ready", true}, {"environment", env}, {"capabilities", cj}, {"startup_ms", startup},
          {"host", host.forked() ? "forked" : "spawned"}});
  }
  // A differential campaign's baseline: a subject host of its own (one process cannot hold two
  // trees of a package), fed the same case, judged the same way.
  std::unique_ptr<SubjectWorker> baseline;
  if (!o.baseline.empty()) baseline = std::make_unique<SubjectWorker>(WorkerOptions{"", "", 600, "baseline", ""});
  LadderMemo baseline_memo;
  LadderMemo memo;  // this process's: its compiled functions are the ones the ladder would reuse
  CallHistory history;  // what this process ran: a finding carries the calls before it
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::json req = nlohmann::json::parse(line);
    if (req.contains("ladder_answer")) continue;  // for a case that ended before its answer came
    const std::string key = req.at("key").get<std::string>();
    std::string stage = "parse";
    RunOptions opt;
    opt.subject = o.subject;
    opt.subject_path = o.subject_path;
    opt.ladder_memo = &memo;
    opt.stop_when_subject_dies = true;
    opt.on_stage = [&](const std::string& s) {
      stage = s;
      emit({{"key", key}, {"stage", s}});
    };
    auto t0 = std::chrono::steady_clock::now();
    nlohmann::json res{{"key", key}};
    // The subject's process died: "crash:<how>@<stage>", as if
    // this worker had; the campaign then starts a fresh one, never a half-restarted one.
    bool died = false;
    std::optional<Case> ran;
    try {
      const Sequence calls = req.contains("sequence") ? sequence_from_json(req["sequence"].dump())
                                                      : Sequence{{from_json(req.at("case").dump())}};
      ran = calls.last();
      const Case& c = calls.last();
      configure_lane(lane_named(req.value("lane", "compiled")).value_or(Lane::COMPILED), c, opt);
      if (!req.value("ladder", true)) opt.ladder = false;  // an analysis run: only whether it still fails
      if (req.value("ladder_gate", false))
        // Ask the campaign before walking: it makes one worker walk a ladder, the others wait for it.
        opt.ladder_gate = [&](const std::string& sig, bool known) -> std::optional<LadderMemo::Entry> {
          emit({{"key", key}, {"ladder_query", sig}, {"known", known}});
          for (std::string answer; std::getline(std::cin, answer);) {
            nlohmann::json a = nlohmann::json::parse(answer, nullptr, false);
            if (!a.is_object() || a.value("key", "") != key || !a.contains("ladder_answer")) continue;
            const nlohmann::json& la = a["ladder_answer"];
            LadderMemo::Entry e;
            if (la.value("defer", false)) {  // the campaign walks it later, off this lane
              e.deferred = true;
              return e;
            }
            if (la.value("walk", true)) return std::nullopt;
            for (auto& st : la.value("ladder", nlohmann::json::array()))
              e.ladder.push_back({st.value("backend", ""), st.value("pass", false), st.value("what", "")});
            e.first_failing_stage = la.value("first_failing_stage", "");
            return e;
          }
          return std::nullopt;  // the campaign is gone
        };
      if (req.contains("ladders")) learn_ladders(req["ladders"], c, memo);
      RunReport rep = run_sequence(calls, opt).last;
      if (auto why = plugin_import_failure(rep)) {
        emit({{"key", key}, {"bad_input", true}, {"why", *why}});
        return 2;  // every case would say the same: bad input, not a finding
      }
      died = !rep.subject_died.empty();
      res["outcome"] = rep.outcome;
      res["report"] = report_json(rep);
      if (baseline && !died) {
        RunOptions bo = opt;
        bo.subject = o.baseline;
        bo.subject_path = o.baseline_path;
        bo.runner = baseline.get();
        bo.ladder_memo = &baseline_memo;
        bo.on_stage = [&](const std::string& s) {
          stage = "baseline:" + s;
          emit({{"key", key}, {"stage", stage}});
        };
        RunReport brep = run_sequence(calls, bo).last;
        res["baseline_outcome"] = brep.outcome;
        res["baseline_report"] = report_json(brep);
      }
    } catch (const std::bad_alloc&) {
      res["outcome"] = "oom@" + stage;  // the memory limit: this case is lost, the worker is not
    } catch (const std::exception& e) {
      res["outcome"] = "flce-error@" + stage;
      res["error"] = e.what();
    }
    res["wall_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool poisoned = res.contains("report") && cuda_context_lost(res["report"].dump());
    res["cuda_poisoned"] = poisoned;
    res["subject_died"] = died;
    if (ran) {
      const std::string out = res["outcome"].get<std::string>();
      if (out != "pass" && !is_unsupported_outcome(out)) res["history"] = history.before(*ran, poisoned || died);
      history.record(key, *ran);
    }
    emit(res);
    if (poisoned || died) return 0;  // every later case in this process would fail too
  }
  return 0;
}

}  // namespace flce
