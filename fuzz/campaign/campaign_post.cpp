// The campaign after exploration (campaign_impl.hpp): the analyses still pending, the shrink of
// every finding (findings/campaign_shrink.hpp), finding.json, the reports and the run's result.
#include <unistd.h>

#include <cstdio>

#include "fuzz/campaign/campaign_impl.hpp"
#include "fuzz/campaign/campaign_report.hpp"
#include "fuzz/findings/campaign_shrink.hpp"
#include "fuzz/findings/root_cause.hpp"

namespace flce::campaign_impl {

// After exploration: the analyses still pending, the shrink, finding.json, the reports. It ends
// within --grace-s of the budget's end; what it cuts is resumed by the next run.
CampaignResult Campaign::after_exploration(const std::vector<std::string>& gpus, const std::vector<LanePlan>& plan,
                                           int64_t resumed_cases) {
  // Exploration is over and every result is recorded: the idle workers have nothing to finish.
  for (auto& s : slots_) s.proc->kill();
  if (spare_ && spare_->started) spare_->proc->kill();
  if (tty_) std::fprintf(stderr, "\r\033[K");
  save_state();
  const double explore_wall_s = std::chrono::duration<double>(Clock::now() - t0_).count();  // throughput: not shrinking
  st_.unusable = unusable_;
  if (!unusable_.empty()) save_state();
  // The ablation first (cheap and bounded), then the full shrink: a finding's cause decides
  // whether it is news before any time goes into shrinking it.
  // Everything after exploration (analyses, shrinking) ends within --grace-s of the budget's
  // end, not of exploration's (killing a loaded box's busy workers can take seconds): a box
  // shared by a dozen campaigns gets its cores back on time. What is cut is resumed next run.
  const double late_s = std::max(0.0, elapsed() - o_.minutes * 60);
  const auto post_t0 = Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(late_s));
  nlohmann::ordered_json ending{{"exploration_s", elapsed()}};
  auto post_left = [&] { return o_.grace_s - std::chrono::duration<double>(Clock::now() - post_t0).count(); };
  finish_analyses(g_stop || !unusable_.empty() ? 0 : std::max(0.0, std::min(o_.grace_s, o_.analyze_s) - late_s));
  ending["analyses_s"] = elapsed();
  // Grouped before the shrink too: a symptom is not news, so its shrink time goes to the roots.
  group_root_causes(st_.findings, dir_);
  static volatile std::sig_atomic_t post_stop = 0;
  post_stop = 0;
  std::atomic<bool> post_done{false};
  std::thread watchdog([&] {  // the shrink phase's stop: a signal, or the grace running out
    while (!post_done) {
      if (g_stop || post_left() <= 0) post_stop = 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  if (o_.minimize_s > 0 && !g_stop && unusable_.empty() && post_left() > 0) {
    ShrinkOptions so;
    so.worker = launch_;
    // --check-repros: the shrink leaves the check its time (a fresh interpreter, one compile: 15-17 s for
    // Liger's compiled findings on the H200), else a compiled shrink's last try ends the grace and no
    // script is checked (main-s199/s223); at least one try, so a repro.py to check is written.
    const double reserve = o_.check_repros ? std::min(o_.case_timeout_s, kCheckReserveS) : 0.0;
    so.per_finding_s = std::min(o_.minimize_s, std::max(1.0, post_left() - reserve)), so.case_timeout_s = o_.case_timeout_s;
    so.gpus = gpus;
    so.parallel = o_.workers;
    so.check_alone = o_.check_repros;
    so.quiet = o_.quiet;
    so.stop = &post_stop;
    so.deadline = post_t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.grace_s));
    const auto shrink_t0 = Clock::now();
    std::map<std::string, int> runs_before;
    for (auto& f : st_.findings) runs_before[f.id] = f.shrink_runs;
    shrink_findings(dir_, st_.findings, so, [&] { save_state(); });
    // The shrink phase's time, shared among the lanes by the shrink runs of their findings.
    const double shrink_s = std::chrono::duration<double>(Clock::now() - shrink_t0).count();
    std::map<std::string, int> runs;
    int all = 0;
    for (auto& f : st_.findings) {
      const int n = f.shrink_runs - runs_before[f.id];
      runs[std::string(lane_name(lane_of_key(f.first_case)))] += n;
      all += n;
    }
    for (auto& [lane, n] : runs)
      if (all > 0) st_.lanes[lane].shrink_s += shrink_s * n / all;
    save_state();
  }
  post_done = true;
  watchdog.join();
  stop_zygote();
  ending["shrink_s"] = elapsed();
  // One root cause, one finding: symptoms and order-dependent variants under their root.
  group_root_causes(st_.findings, dir_);
  save_state();
  for (auto& f : st_.findings) write_finding_json(f);

  RunStats rs;
  rs.cases_this_run = st_.cases_done - resumed_cases;
  rs.graphs_this_run = graphs_this_run_;
  rs.first_ready_s = first_ready_s_;
  rs.worker_starts = worker_starts_;
  rs.zygote = zygote_info_;
  rs.analyses = analyses_run_;
  // Without an eager lane, lending_lane() lends the finder's, whatever --lend-from says.
  rs.lend_from = has_eager_lane() && !o_.lend_from_finder ? "eager" : "finder";
  rs.neighbours_dropped = neighbours_dropped_;
  rs.walks_deferred = walks_.queued();
  rs.spare_swaps = spare_swaps_;
  rs.ending = std::move(ending);
  rs.walks_deferred_done = walks_done_;
  rs.family_size = o_.family_size;
  rs.wall_s = explore_wall_s;
  rs.seed = o_.seed;
  rs.workers = o_.workers;
  rs.lanes = lanes_text(plan);
  rs.minutes = o_.minutes;
  rs.max_cases = o_.max_cases;
  rs.interrupted = g_stop != 0;
  rs.known = known_.sources;
  rs.identity = o_.identity;
  if (!o_.baseline.empty()) rs.baseline = o_.baseline + (o_.baseline_path.empty() ? "" : " (" + o_.baseline_path + ")");
  write_reports(dir_, st_, rs);
  std::printf("%s", summary_text(dir_, st_, rs).c_str());
  ::close(lock_fd_);
  if (!unusable_.empty())  // bad input, not findings: state and reports stay as written
    throw CampaignInputError(fmt::format("subject unusable: {}; report: {}", unusable_, (dir_ / "report.md").string()));
  CampaignResult res{static_cast<int64_t>(st_.findings.size()), st_.cases_done};
  for (auto& f : st_.findings)
    if (f.is_new()) ++res.new_findings;
    else if (!f.known.empty()) ++res.known_findings;
  return res;
}

}  // namespace flce::campaign_impl
