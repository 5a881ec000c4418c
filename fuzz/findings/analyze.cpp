#include "fuzz/findings/analyze.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace flce {

namespace {

using Clock = std::chrono::steady_clock;

bool lost_run(const std::string& outcome) {
  return outcome.rfind("crash:", 0) == 0 || outcome.rfind("timeout@", 0) == 0 || outcome.rfind("oom@", 0) == 0 ||
         outcome.rfind("flce-error@", 0) == 0;
}

}  // namespace

bool reply_shows(const FailureClass& f, const Difference& d, const WorkerReply& r) {
  switch (d.change) {
    case Change::NONE: return shows(f, r.outcome, r.report);
    case Change::FIXED:  // the baseline's failure, gone on the subject
      return shows(f, r.baseline_outcome, r.baseline_report) && !shows(f, r.outcome, r.report);
    case Change::REGRESSED:
    case Change::CHANGED:  // the subject's failure, which the baseline does not show
      return shows(f, r.outcome, r.report) && !shows(f, r.baseline_outcome, r.baseline_report);
  }
  return false;
}

AnalyzeResult analyze(const Case& c, const FailureClass& f, double first_ratio,
                      const std::function<WorkerReply(const Case&)>& run, const AnalyzeOptions& o) {
  AnalyzeResult res;
  const auto t0 = Clock::now();
  auto left = [&] { return o.budget_s - std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto stopped = [&] { return o.stop && *o.stop; };
  auto say = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  WorkerReply r;
  auto once = [&](const Case& k) {
    ++res.runs;
    r = run(k);
    return r;
  };
  try {
    once(c);
    if (stopped()) return res.note = "stopped: the campaign ended during the analysis", res;
    if (!reply_shows(f, o.diff, r)) {
      res.note = lost_run(r.outcome)
                     ? fmt::format("the case alone ended {}: no ablation", r.outcome)
                     : fmt::format("the case alone in a fresh worker gives {}: it depends on what ran before it", r.outcome);
      return res;
    }
    // Features reset one per run, cumulatively: a reset that keeps the failure stays reset, so
    // a case that carries two bugs under different flags (either one fails it) ends at one of
    // them instead of at "no single flag matters". What is left is a 1-minimal feature set: each
    // of its features, reset alone from it, made the failure go away.
    const std::vector<Ablation> todo = ablations(c, f);
    std::vector<std::string> inconclusive;
    Case current = c;
    for (auto& a : todo) {
      if (stopped()) return res.note = "stopped", res;
      if (res.runs >= o.max_runs || left() <= 0) {
        res.note = fmt::format("budget: {} of {} features tried ({} runs, {:.0f} s)", res.tested.size(), todo.size(),
                               res.runs, o.budget_s);
        return res;
      }
      const std::vector<std::string> left_now = features(current);
      if (std::find(left_now.begin(), left_now.end(), a.feature) == left_now.end()) continue;  // went with an earlier reset
      const std::optional<Case> next = reset_feature(current, a.feature);
      if (!next) {  // not resettable alone from what is left: kept, and said
        res.essential.push_back(a.feature);
        res.tested.push_back(a.feature + " (not resettable alone)");
        continue;
      }
      once(*next);
      res.tested.push_back(a.feature);
      if (lost_run(r.outcome)) inconclusive.push_back(fmt::format("{} ({})", a.feature, r.outcome));
      else if (!reply_shows(f, o.diff, r)) res.essential.push_back(a.feature);
      else current = *next;
      say(fmt::format("reset {}: {}", a.feature, r.outcome));
    }
    if (!inconclusive.empty()) {  // a reset that crashed says nothing either way: no cause from a guess
      std::string what;
      for (auto& i : inconclusive) what += (what.empty() ? "" : ", ") + i;
      res.note = "a reset run was lost: " + what;
      return res;
    }
    res.status = CauseStatus::ABLATED;
    res.cause = cause_key(f.key, res.essential);
    if (o.confirm_marginal && f.numeric && f.kind == "out-of-bounds" && first_ratio > 0 && first_ratio < kMarginalRatio) {
      res.confirm.first_ratio = first_ratio;
      for (int k = 0; k < kConfirmSeeds && !stopped() && left() > 0; ++k) {
        once(with_fresh_seed(c, k));
        ++res.confirm.seeds;
        const double w = oracle_worst_ratio(f, r.report);
        res.confirm.max_ratio = std::max(res.confirm.max_ratio, w);
        if (shows(f, r.outcome, r.report)) ++res.confirm.exceed;
      }
      if (res.confirm.seeds < kConfirmSeeds)
        res.note = fmt::format("marginal confirmation cut at {} of {} seeds (budget)", res.confirm.seeds, kConfirmSeeds);
    }
  } catch (const std::exception& e) {
    res.status = CauseStatus::NOT_RUN;
    res.cause.clear();
    res.note = fmt::format("the analysis worker failed: {}", e.what());
  }
  return res;
}

}  // namespace flce
