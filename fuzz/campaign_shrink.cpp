#include "fuzz/campaign_shrink.hpp"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fuzz/campaign.hpp"
#include "fuzz/campaign_report.hpp"
#include "fuzz/campaign_state.hpp"
#include "case/case.hpp"
#include "fuzz/cuda_fault.hpp"
#include "fuzz/emit_python.hpp"
#include "fuzz/history_shrink.hpp"
#include "fuzz/minimize.hpp"
#include "process/process.hpp"

namespace flce {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kStartupTimeoutS = 300;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One `flce worker`, used synchronously: a case in, its outcome line out. A worker that
// dies or overruns becomes that try's outcome ("crash:SIGSEGV@eager", "timeout@compiled"),
// exactly as the exploration phase names them, and the next try gets a fresh worker.
class ShrinkWorker {
 public:
  ShrinkWorker(const ShrinkOptions& o, fs::path log, std::string gpu)
      : o_(o), log_(std::move(log)), gpu_(std::move(gpu)) {}

  std::string outcome(const Case& c) { return ask({{"case", nlohmann::json::parse(to_json(c, -1))}}); }

  // The report of the last try that showed `signature`: minimize accepts every such try, so
  // after it that is the minimum's own run, whose values go into minimized_report.json (an
  // upstream report then quotes what repro.py shows).
  void keep_reports_of(std::string signature) {
    keep_ = std::move(signature);
    kept_case_.clear();
    kept_report_ = nullptr;
  }
  const nlohmann::json* report_of(const Case& c) const {
    return !kept_case_.empty() && kept_case_ == nlohmann::json::parse(to_json(c, -1)).dump() ? &kept_report_ : nullptr;
  }

  // A sequence's outcome in a fresh worker (history-free but for the sequence itself), which
  // is not reused afterwards: its compiled functions have seen the sequence.
  std::string fresh_outcome(const Sequence& s) {
    if (proc_ && proc_->alive()) proc_->stop(10.0);
    proc_.reset();
    std::string o = ask({{"sequence", nlohmann::json::parse(to_json(s, -1))}});
    if (proc_ && proc_->alive()) proc_->stop(10.0);
    proc_.reset();
    return o;
  }

  std::string ask(nlohmann::json req) {
    if (!proc_ || !proc_->alive()) start();
    const std::string key = fmt::format("shrink-{}", ++n_);
    req["key"] = key;
    proc_->send(req.dump() + "\n");
    std::string stage = "queued";
    const auto t0 = Clock::now();
    for (;;) {
      nlohmann::json j;
      std::string how;
      const double left = o_.case_timeout_s - since(t0);
      if (left <= 0) {
        proc_->kill();
        return "timeout@" + stage;
      }
      if (!next_line(left, &j, &how)) return fmt::format("crash:{}@{}", how, stage);
      if (j.is_null() || j.value("key", "") != key) continue;
      if (j.contains("stage")) stage = j["stage"].get<std::string>();
      else if (j.value("bad_input", false)) throw std::runtime_error("shrink: worker refused the case: " + j.value("why", ""));
      else if (j.contains("outcome")) {
        const std::string out = j["outcome"].get<std::string>();
        if (!keep_.empty() && out == keep_ && req.contains("case") && j.contains("report"))
          kept_case_ = req["case"].dump(), kept_report_ = j["report"];
        return out;
      }
    }
  }

  ~ShrinkWorker() {
    if (proc_ && proc_->alive()) proc_->stop(10.0);
  }

 private:
  void start() {
    proc_ = std::make_unique<Process>();
    // The log's name gives it its own Inductor cache, as each exploration slot has.
    const ProcessSpec w =
        worker_spec(o_.flce_exe, o_.subject, o_.subject_path, o_.worker_mem_gib, gpu_, log_.string(), 1);
    proc_->spawn(w);
    const auto t0 = Clock::now();
    for (;;) {
      nlohmann::json j;
      std::string how;
      const double left = kStartupTimeoutS - since(t0);
      if (left <= 0 || !next_line(left, &j, &how))
        throw std::runtime_error(fmt::format("shrink: worker did not start ({}); see {}", how.empty() ? "timeout" : how,
                                             log_.string()));
      if (j.is_object() && j.contains("ready")) {
        if (!j["ready"].get<bool>()) throw std::runtime_error("shrink: worker refused: " + j.value("why", ""));
        return;
      }
    }
  }

  // Next protocol line within `timeout_s`; false (with *how) when the worker ended.
  bool next_line(double timeout_s, nlohmann::json* out, std::string* how) {
    const auto t0 = Clock::now();
    while (pending_.empty()) {
      const double left = timeout_s - since(t0);
      if (left <= 0) {
        *out = nullptr;
        return true;  // the caller re-checks its own deadline
      }
      pollfd pf{proc_->out_fd(), POLLIN, 0};
      ::poll(&pf, 1, static_cast<int>(std::min(left, 0.5) * 1000) + 1);
      std::vector<std::string> lines;
      const bool open = proc_->read_lines(lines);
      for (auto& l : lines) pending_.push_back(l);
      if (pending_.empty()) {
        std::string ended = open ? proc_->poll_exit() : proc_->stop(5.0);
        if (!ended.empty()) {
          *how = ended;
          return false;
        }
      }
      if (o_.stop && *o_.stop) {
        *how = proc_->kill();
        return false;
      }
    }
    *out = nlohmann::json::parse(pending_.front(), nullptr, false);
    pending_.erase(pending_.begin());
    if (out->is_discarded()) *out = nullptr;
    return true;
  }

  ShrinkOptions o_;
  fs::path log_;
  std::string gpu_;  // CUDA_VISIBLE_DEVICES of this worker ("": inherit)
  std::string keep_, kept_case_;
  nlohmann::json kept_report_;
  std::unique_ptr<Process> proc_;
  std::vector<std::string> pending_;
  int n_ = 0;
};

// A finding its case alone does not show: replayed with the calls before it (history_shrink.hpp).
std::string shrink_lost(const fs::path& fdir, const Case& c, Finding& f, ShrinkWorker& worker, const ShrinkOptions& o,
                        const std::string& signatures, const std::string& lost) {
  SequenceFindingOptions so{o.subject, o.subject_path, signatures, f.cuda_poisoned, {}};
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
  worker.keep_reports_of(f.signature);
  mo.outcome = [&](const Case& k) { return worker.outcome(k); };
  if (!o.quiet) mo.log = [&](const std::string& l) { std::fprintf(stderr, "shrink %s: %s\n", f.id.c_str(), l.c_str()); };
  try {
    MinimizeResult r = minimize(c, mo);
    f.shrink_runs = r.runs;
    f.min_elements = case_size(r.minimized).elements;
    if (r.outcome != f.signature) {
      f.shrink = "lost: " + r.outcome;  // not this finding any more (flaky, or depends on history)
      f.shrink = shrink_lost(fdir, c, f, worker, o, signatures, f.shrink);
    } else {
      f.shrink = !r.fixed_point ? "budget" : r.accepted > 0 ? "minimized" : "smallest";
      write_atomic(fdir / "minimized.json", to_json(r.minimized, 2) + "\n");
      if (const nlohmann::json* rep = worker.report_of(r.minimized)) write_atomic(fdir / "minimized_report.json", rep->dump(2) + "\n");
      EmitSpec spec{r.minimized, o.subject, o.subject_path, (fdir / "minimized.json").string(),
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

}  // namespace

void shrink_findings(const fs::path& dir, CampaignState& st, const ShrinkOptions& o,
                     const std::function<void()>& save) {
  const std::string signatures = read_text(fs::path(FLCE_SOURCE_DIR) / "judge" / "signatures.json");
  std::vector<Finding*> todo;
  for (auto& f : st.findings)
    if (f.shrink.empty()) todo.push_back(&f);
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
      // CUDA faults name their kernel (fuzz/cuda_fault.hpp): a fresh, launch-blocking re-run.
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
