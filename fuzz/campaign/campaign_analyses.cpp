// The campaign's analyses (campaign_impl.hpp): a finding's ablation (findings/analyze.hpp) and the
// deferred ladder walks, each in a thread of the parent with a fresh worker of its own; which lane
// lends them slots while exploring, and what is left of them when exploration ends.
#include "fuzz/campaign/campaign_impl.hpp"

namespace flce::campaign_impl {

// How many of a lane's slots analyses may borrow, past the analysis workers of their own. While
// exploring, a quarter of the lane (none of a lane of 1-3 workers): lending the one compiled
// slot of each of ten campaigns side by side stopped their compiled lanes for minutes (19 graph
// configurations in 5 minutes, docs/benchmarks-history.md). Without analysis workers, half, at least one. Once
// exploration is over, every slot.
size_t Campaign::max_analyses(Lane l) const {
  const size_t n = std::count_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.lane == l; });
  if (finishing_) return n;
  if (analysis_workers() == 0) return std::max<size_t>(1, n / 2);
  return n / 4;
}

// The lane whose slots an analysis borrows while exploring: the eager lane where the campaign
// has one, whichever lane found the failure, with the compiled lane's share added to its own.
// An eager slot runs a case in a tenth of a second, a compiled one in seconds, and new graph
// configurations are what the compiled lane is for: on the H200 (main-s227 and -s229, default
// lanes) five or six analyses borrowed lane slots, the compiled findings' ones compiled slots,
// and the lane covered 29 graph configurations a minute. The analysis runs in a fresh worker of its
// own either way; the slot only bounds how many run at once. Once exploration is over, the
// finding's own lane, every slot.
Lane Campaign::lending_lane(Lane found) const {
  if (finishing_ || o_.lend_from_finder) return found;
  return has_eager_lane() ? Lane::EAGER : found;
}

bool Campaign::has_eager_lane() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.lane == Lane::EAGER; });
}

size_t Campaign::lendable(Lane l) const {
  if (finishing_ || o_.lend_from_finder || l != Lane::EAGER) return max_analyses(l);
  return max_analyses(Lane::EAGER) + max_analyses(Lane::COMPILED);
}

void Campaign::start_analysis(const AnalysisRequest& r) {
  const Lane lane = lending_lane(lane_named(r.found_in).value_or(Lane::COMPILED));
  if (analysis_stop_ || (!st_.subject_ran && !finishing_)) {
    // While no case has produced outputs the subject may be unusable (watch_usable): its first
    // failures decide that, and analyzing them first would only delay the verdict.
    queued_.push_back(r);
    return;
  }
  // A signature's first walk before this analysis: on the H200, ten campaigns' one analysis
  // worker each, always busy with analyses, walked 1 of 243 queued walks in 5 minutes, so no
  // unknown signature's finding named its first failing stage (the guilty side).
  start_walks(true);
  Slot* lend = nullptr;
  if (own_jobs() >= analysis_workers()) {
    // The analysis workers are all busy: a slot of the lane to lend, an idle one first, else one
    // whose case is in flight (it takes no new case when that ends). None of the lane left to
    // lend, or at its share: queued.
    const size_t lent = std::count_if(jobs_.begin(), jobs_.end(), [&](const AnalysisJob& j) {
      return j.slot != AnalysisJob::kOwnWorker && slots_[j.slot].lane == lane;
    });
    for (auto& s : slots_)
      if (s.lane == lane && !s.held && (!lend || (s.st == Slot::IDLE && lend->st != Slot::IDLE))) lend = &s;
    if (!lend || lent >= lendable(lane)) {
      queued_.push_back(r);
      return;
    }
    lend->held = true;
  }
  AnalysisJob& job = jobs_.emplace_back();
  job.req = r;
  WorkerLaunch l = own_launch("analyze");
  if (lend) {
    job.slot = static_cast<size_t>(lend - slots_.data());
    l.gpu = lend->gpu;
  }
  ++analyses_run_[lend ? "lent" : "own"];
  if (lend) ++analyses_run_[fmt::format("lent_{}", lane_name(lend->lane))];
  AnalyzeOptions ao;
  ao.budget_s = o_.analyze_s;
  ao.diff = r.diff;
  ao.stop = &analysis_stop_;
  const double case_timeout = o_.case_timeout_s;
  job.th = std::thread([&job, l, ao, case_timeout] {
    WorkerClient client(l, case_timeout, ao.stop);  // fresh: nothing ran in it before the finding's case
    job.result = analyze(job.req.c, job.req.failure, job.req.first_ratio,
                         [&](const Case& k) { return client.probe_case(nlohmann::json::parse(to_json(k, -1)), job.req.lane); },
                         ao);
    job.done = true;
  });
}

WorkerLaunch Campaign::own_launch(const char* kind) {
  WorkerLaunch l = launch_;
  if (!slots_.empty()) l.gpu = slots_[static_cast<size_t>(analyses_started_) % slots_.size()].gpu;  // as the slots are
  l.log_path = (dir_ / "workers" / fmt::format("{}-{}.log", kind, analyses_started_++)).string();
  return l;
}

void Campaign::queue_walk(const Ticket& t, const nlohmann::json& report) {
  const std::string key = ladder_key(t.graph, report);
  if (auto it = st_.ladders.find(key); it != st_.ladders.end() && !it->second.ladder.empty()) return;
  walks_.push({key, t.case_json});
}

// analyses_waiting: an analysis is about to ask for an analysis worker (besides those queued).
void Campaign::start_walks(bool analyses_waiting) {
  while (!walks_.empty() && !analysis_stop_) {
    if (own_jobs() >= analysis_workers()) return;  // never a lane's slot: the walk is what must not hold one
    // A signature's first walk goes first, else analyses do.
    std::optional<DeferredWalk> next = walks_.next(analyses_waiting || !queued_.empty());
    if (!next) return;
    DeferredWalk w = std::move(*next);
    AnalysisJob& job = jobs_.emplace_back();
    job.walk_key = w.key;
    const WorkerLaunch l = own_launch("walk");
    const double case_timeout = o_.case_timeout_s;
    volatile std::sig_atomic_t* stop = &analysis_stop_;
    job.th = std::thread([&job, l, case_timeout, stop, c = std::move(w.case_json)] {
      try {
        WorkerClient client(l, case_timeout, stop);
        job.walk = client.run_case(nlohmann::json::parse(c), "compiled");  // the full ladder, no gate
      } catch (const std::exception& e) {
        job.walk.outcome = std::string("walk failed: ") + e.what();
      }
      job.done = true;
    });
  }
}

// A deferred walk that ended: its ladder becomes the campaign's for the key, as a walk in the
// lane would have (later cases of the graph reuse it); a walk that found no failing stage (the
// case alone passes: an order-dependent failure) or died leaves the key unwalked, and only one
// that died gives the signature's next walk a first walk's turn (WalkQueue::done).
void Campaign::apply_walk(const AnalysisJob& job) {
  const nlohmann::json& rep = job.walk.report;
  const std::string stage = rep.is_object() ? rep.value("first_failing_stage", "") : "";
  nlohmann::json ladder = rep.is_object() ? rep.value("ladder", nlohmann::json::array()) : nlohmann::json::array();
  const bool found = !stage.empty() && !ladder.empty();
  const bool alone_passed = job.walk.outcome == "pass";  // not a crash, timeout or lost worker
  walks_.done(job.walk_key,
              found ? WalkQueue::End::STAGE : alone_passed ? WalkQueue::End::PASSED_ALONE : WalkQueue::End::LOST);
  if (!found) return;
  SharedLadder& l = st_.ladders[job.walk_key];
  ++l.walks;
  l.ladder = std::move(ladder);
  l.first_failing_stage = stage;
  ++walks_done_;
}

void Campaign::poll_analyses() {
  bool changed = false;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->th.join();
    if (!it->walk_key.empty()) {
      apply_walk(*it);
      it = jobs_.erase(it);
      changed = true;
      continue;
    }
    if (it->slot != AnalysisJob::kOwnWorker) slots_[it->slot].held = false;
    const std::string id = it->req.finding_id;
    const AnalyzeResult res = it->result;
    it = jobs_.erase(it);
    for (auto& next : book_->resolve(id, res, elapsed())) queued_.push_back(next);
    // A finding the known list explains is charted: its neighbours would only show it again (on
    // the H200, 26 neighbours of the seed's known tier 1 held the compiled lane for 10 s).
    if (book_->resolved_known(id)) {
      const size_t before = st_.neighbours.size();
      std::erase_if(st_.neighbours, [&](const auto& n) {
        return !dispatched_.count(n.first) && (n.first.rfind("neighbour:" + id + "#", 0) == 0 ||
                                              n.first.rfind("neighbour:" + id + "/eager#", 0) == 0);
      });
      neighbours_dropped_ += static_cast<int64_t>(before - st_.neighbours.size());
    }
    changed = true;
  }
  if (!queued_.empty() && (st_.subject_ran || finishing_)) {
    std::vector<AnalysisRequest> q = std::move(queued_);
    queued_.clear();
    for (auto& r : q) start_analysis(r);  // each lets a signature's first walk take a free worker first
  }
  start_walks(false);
  if (changed) save_state();
}

// After exploration: the analyses still running or queued get up to `budget_s` (the shrink
// phase's own budget), then whatever is left keeps its outcome line as its key.
void Campaign::finish_analyses(double budget_s) {
  const auto t0 = Clock::now();
  finishing_ = true;
  for (auto& s : slots_) s.held = false;  // exploration is over: any slot may be lent
  for (;;) {
    poll_analyses();
    if (jobs_.empty() && queued_.empty() && walks_.empty()) break;
    if (g_stop || std::chrono::duration<double>(Clock::now() - t0).count() > budget_s) analysis_stop_ = 1;
    if (analysis_stop_ && jobs_.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  analysis_stop_ = 1;
  for (auto& j : jobs_) j.th.join();
  jobs_.clear();
  queued_.clear();
  book_->close(budget_s > 0 ? fmt::format("budget: the ablation did not finish within the campaign ({:.0f} s after exploration)", budget_s)
                            : "budget: the campaign ended before the ablation ran (no --grace-s left, or stopped)",
               elapsed());
  save_state();
}

}  // namespace flce::campaign_impl
