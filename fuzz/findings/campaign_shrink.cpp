#include "fuzz/findings/campaign_shrink.hpp"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "case/case.hpp"
#include "fuzz/findings/cuda_fault.hpp"
#include "repro/emit_python.hpp"
#include "fuzz/findings/history_shrink.hpp"
#include "fuzz/findings/minimize.hpp"
#include "repro/script_check.hpp"
#include "judge/signature.hpp"
#include "report/write.hpp"
#include "process/process.hpp"

namespace flce {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// One `flce worker` of a finding's lane, used synchronously (worker_client.hpp), keeping the
// report of the last try that showed the finding's signature: minimize accepts every such try,
// so after it that is the minimum's own run, whose values go into minimized_report.json (an
// upstream report then quotes what repro.py shows).
class ShrinkWorker {
 public:
  ShrinkWorker(const ShrinkOptions& o, fs::path log, std::string gpu) : client_(launch(o, log, gpu), o.case_timeout_s, o.stop) {}

  void use_lane(std::string lane) { lane_ = lane.empty() ? "compiled" : std::move(lane); }
  std::string outcome(const Case& c) {
    const nlohmann::json cj = nlohmann::json::parse(to_json(c, -1));
    WorkerReply r = client_.run_case(cj, lane_);
    if (!keep_.empty() && r.outcome == keep_ && !r.report.is_null()) kept_case_ = cj.dump(), kept_report_ = r.report;
    return r.outcome;
  }
  void keep_reports_of(std::string signature) {
    keep_ = std::move(signature);
    kept_case_.clear();
    kept_report_ = nullptr;
  }
  const nlohmann::json* report_of(const Case& c) const {
    return !kept_case_.empty() && kept_case_ == nlohmann::json::parse(to_json(c, -1)).dump() ? &kept_report_ : nullptr;
  }
  // A case's outcome in a fresh worker. minimize()'s tries in one worker share its compiled
  // functions, whose earlier shapes can make a try fail that alone passes (a second-shape failure,
  // pytorch#181735's kind): on the H200 such minima gave scripts that did not reproduce alone.
  std::string fresh_case_outcome(const Case& c) {
    client_.restart();
    return outcome(c);
  }
  // A sequence's outcome in a fresh worker (history-free but for the sequence itself), which
  // is not reused afterwards: its compiled functions have seen the sequence.
  std::string fresh_outcome(const Sequence& s) {
    client_.restart();
    std::string o = client_.run_sequence(nlohmann::json::parse(to_json(s, -1)), lane_).outcome;
    client_.restart();
    return o;
  }

 private:
  static WorkerLaunch launch(const ShrinkOptions& o, const fs::path& log, const std::string& gpu) {
    WorkerLaunch l = o.worker;
    l.log_path = log.string();  // its own Inductor cache too, unless the campaign shares one
    l.gpu = gpu;
    return l;
  }
  WorkerClient client_;
  std::string lane_ = "compiled";
  std::string keep_, kept_case_;
  nlohmann::json kept_report_;
};

// A finding its case alone does not show: replayed with the calls before it (history_shrink.hpp).
std::string shrink_lost(const fs::path& fdir, const Case& c, Finding& f, ShrinkWorker& worker, const ShrinkOptions& o,
                        const std::string& signatures, const std::string& lost) {
  SequenceFindingOptions so{o.worker.subject, o.worker.subject_path, signatures, f.cuda_poisoned, {}};
  so.shrink.budget_s = o.per_finding_s;
  so.shrink.outcome = [&](const Sequence& s) { return worker.fresh_outcome(s); };
  if (!o.quiet) so.shrink.log = [&](const std::string& l) { std::fprintf(stderr, "shrink %s: %s\n", f.id.c_str(), l.c_str()); };
  int runs = 0;
  std::string status;
  try {
    status = shrink_lost_finding(fdir, c, f.signature, lost, so, &runs);
  } catch (const std::exception& e) {  // a worker that cannot start, a stop signal: the finding stands
    return o.stop && *o.stop ? "" : fmt::format("{} (history replay failed: {})", lost, e.what());
  }
  f.shrink_runs += runs;
  if (status.rfind("minimized-sequence", 0) == 0)
    f.min_elements = case_size(any_case_from_json_file((fdir / "minimized.json").string()).last()).elements;
  return status;
}

// Shrinks one finding (its fields updated in `f`) with `worker`.
void shrink_one(const fs::path& dir, Finding& f, ShrinkWorker& worker, const ShrinkOptions& o,
                const std::string& signatures) {
  const fs::path fdir = dir / "findings" / f.id;
  Case c;
  try {
    c = from_json(read_text(fdir / "case.json"));
  } catch (const std::exception& e) {
    f.shrink = fmt::format("skipped: case.json unreadable ({})", e.what());
    return;
  }
  f.elements = case_size(c).elements;
  if (f.signature.rfind("timeout@", 0) == 0) {
    f.shrink = "skipped: a timeout finding (every try would cost the case timeout)";
    return;
  }
  MinimizeOptions mo;
  mo.budget_s = o.per_finding_s;
  worker.use_lane(f.work_lane());  // an eager failure never pays a compile or a ladder walk
  worker.keep_reports_of(f.signature);
  mo.outcome = [&](const Case& k) { return worker.outcome(k); };
  if (!o.quiet) mo.log = [&](const std::string& l) { std::fprintf(stderr, "shrink %s: %s\n", f.id.c_str(), l.c_str()); };
  try {
    MinimizeResult r = minimize(c, mo);
    f.shrink_runs += r.runs;
    std::string fresh;
    if (same_failure(r.outcome, f.signature) && r.accepted > 0) {
      ++f.shrink_runs;
      const std::string alone = worker.fresh_case_outcome(r.minimized);
      if (!same_failure(alone, f.signature)) {  // the minimum needs the tries before it: again, each try fresh
        if (mo.log) mo.log(fmt::format("the minimum alone gives {}: shrinking again, each try in a fresh worker", alone));
        mo.outcome = [&](const Case& k) { return worker.fresh_case_outcome(k); };
        mo.budget_s = std::max(1.0, o.per_finding_s - r.seconds);
        r = minimize(c, mo);  // CaseError when the case itself passes alone: the history replay below
        f.shrink_runs += r.runs;
        fresh = fmt::format(" (each try in a fresh worker: in one, the first minimum failed only after the tries "
                            "before it and gave {} alone)", alone);
      }
    }
    f.min_elements = case_size(r.minimized).elements;
    if (!same_failure(r.outcome, f.signature)) {
      f.shrink = "lost: " + r.outcome;  // not this finding any more (flaky, or depends on history)
      f.shrink = shrink_lost(fdir, c, f, worker, o, signatures, f.shrink);
    } else {
      f.shrink = (!r.fixed_point ? "budget" : r.accepted > 0 ? "minimized" : "smallest") + fresh;
      write_atomic(fdir / "minimized.json", to_json(r.minimized, 2) + "\n");
      if (const nlohmann::json* rep = worker.report_of(r.minimized)) write_atomic(fdir / "minimized_report.json", rep->dump(2) + "\n");
      EmitSpec spec{r.minimized, o.worker.subject, o.worker.subject_path, (fdir / "minimized.json").string(),
                    {{"", "any", f.signature}}, signatures};
      write_atomic(fdir / "repro.py", emit_python(spec));
    }
  } catch (const CaseError& e) {  // the first run passed or was unsupported: no longer reproduces
    f.shrink = shrink_lost(fdir, c, f, worker, o, signatures, fmt::format("lost: {}", e.what()));
  } catch (const std::exception& e) {  // a worker that cannot start, a stop signal: the findings stand
    // Stopped: left untried, so the resumed campaign shrinks it.
    f.shrink = o.stop && *o.stop ? "" : fmt::format("skipped: {}", e.what());
  }
}

// Runs the repro.py just written alone (--check-repros): it must print REPRODUCED with the
// finding's own signature. Bounded by the shrink phase's deadline and one case's timeout.
void check_alone(const fs::path& fdir, Finding& f, const ShrinkOptions& o) {
  if (!fs::is_regular_file(fdir / "repro.py")) return;
  double limit = o.case_timeout_s;
  if (o.deadline) limit = std::min(limit, std::chrono::duration<double>(*o.deadline - std::chrono::steady_clock::now()).count());
  if (limit < 10) {
    f.repro_alone = "not checked: the shrink phase's time is spent";
    return;
  }
  ScriptCheck sc;
  try {
    sc = check_script_alone((fdir / "repro.py").string(),
                            {"", script_imports_flce_subjects(o.worker.subject), limit});
  } catch (const std::exception& e) {
    f.repro_alone = fmt::format("not checked: {}", e.what());
    return;
  }
  if (sc.timed_out && sc.verdict.empty()) {  // no verdict either way (H200: "differs: eager ok ..." before)
    f.repro_alone = fmt::format("not checked: the script ran past the {:.0f} s left to the check", limit);
    return;
  }
  // repro.py is written only beside a kept minimized.json (a case or a sequence).
  const std::string again = reproduce_command((fdir / "minimized.json").string(), o.worker.subject, o.worker.subject_path);
  const bool same = write_check((fdir / "repro.py").string(), "REPRODUCED: " + f.signature, 0, sc, again);
  f.repro_alone = same ? "same" : "differs: " + (sc.line.empty() ? std::string("no verdict line") : sc.line);
  // The same failure first shown at another rung: say where, the script's walk is of this very case.
  if (const std::string alone = outcome_in(sc.line); same && alone != f.signature)
    f.repro_alone = fmt::format("same failure, alone first shown at {} (the campaign named {})",
                                alone.substr(alone.find('@') + 1), f.signature.substr(f.signature.find('@') + 1));
}

}  // namespace

void shrink_findings(const fs::path& dir, std::vector<Finding>& findings, const ShrinkOptions& o,
                     const std::function<void()>& save) {
  const std::string signatures = read_text(fs::path(FLCE_SOURCE_DIR) / "judge" / "signatures.json");
  std::vector<Finding*> todo;
  for (auto& f : findings)
    if (f.shrink.empty() && f.is_new()) todo.push_back(&f);  // a known finding or a symptom is not news: not shrunk
  // One worker per finding, up to o.parallel at once (each try compiles anew, so findings
  // shrunk one after another would cost their budgets in sequence). The state is only
  // touched under `mu`: a thread shrinks a copy and writes it back.
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto work = [&](int slot) {
    ShrinkWorker worker(o, dir / "workers" / fmt::format("shrink-{}.log", slot),
                        o.gpus.empty() ? "" : o.gpus[static_cast<size_t>(slot) % o.gpus.size()]);
    for (size_t i; (i = next++) < todo.size();) {
      if (o.stop && *o.stop) break;
      Finding f;
      {
        std::lock_guard<std::mutex> lock(mu);
        f = *todo[i];
      }
      shrink_one(dir, f, worker, o, signatures);
      if (o.check_alone && !(o.stop && *o.stop)) check_alone(dir / "findings" / f.id, f, o);
      // CUDA faults name their kernel (fuzz/findings/cuda_fault.hpp): a fresh, launch-blocking re-run.
      if (f.cuda_poisoned && !(o.stop && *o.stop))
        name_cuda_fault(dir / "findings" / f.id, f.signature, o,
                        o.gpus.empty() ? "" : o.gpus[static_cast<size_t>(slot) % o.gpus.size()], signatures);
      if (!o.quiet)
        std::fprintf(stderr, "shrink %s: %s (%lld -> %lld input elements, %d runs)\n", f.id.c_str(), f.shrink.c_str(),
                     static_cast<long long>(f.elements), static_cast<long long>(f.min_elements), f.shrink_runs);
      std::lock_guard<std::mutex> lock(mu);
      *todo[i] = f;
      save();
    }
  };
  const int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(1, o.parallel)), todo.size()));
  std::vector<std::thread> threads;
  for (int k = 1; k < n; ++k) threads.emplace_back(work, k);
  if (n > 0) work(0);
  for (auto& t : threads) t.join();
}

}  // namespace flce
