// What the campaign's files share, private to fuzz/campaign/campaign*.cpp: the Campaign class,
// its slots, tickets and analysis jobs, and the constants they are tuned by. One class, one file
// per concept (each short enough to read whole):
//   campaign.cpp           the parent loop: state, corpus, tickets, recording a case, run()
//   campaign_slots.cpp     the worker slots: spawning, the spare, replies, shared ladders, the zygote
//   campaign_analyses.cpp  findings' analyses and deferred ladder walks on workers of their own
//   campaign_post.cpp      after exploration: the shrink, finding.json, the reports
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "case/case.hpp"
#include "case/sampler.hpp"
#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/campaign_state.hpp"
#include "fuzz/campaign/coverage_guide.hpp"
#include "fuzz/campaign/finding_book.hpp"
#include "fuzz/campaign/walk_queue.hpp"
#include "judge/signature.hpp"
#include "process/process.hpp"
#include "report/write.hpp"

namespace flce::campaign_impl {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Set by SIGINT and SIGTERM (run() installs the handler): each phase stops at its next look.
inline volatile std::sig_atomic_t g_stop = 0;

// A signature of judge/signatures.json (not a catch-all) breaks at one stage whatever the graph.
bool shares_ladder(const nlohmann::json& report);
// The campaign's ladder key of a compiled failure: "*|<sig>" for a known signature (one walk per
// campaign), else "<graph>|<sig>" (an unknown bucket, a catch-all, wrong values: per graph).
std::string ladder_key(const std::string& graph, const nlohmann::json& report);

inline constexpr double kStartupTimeoutS = 300;  // Python + torch import on a loaded machine
inline constexpr int kMaxStartupFailures = 3;    // in a row: flce itself is broken, not a case
// Group commit: state.json and the journal are made durable at most this often (and at once
// for a new finding and at the end). A commit is two fsyncs and a directory sync, 26 ms on
// this machine's disk: per case, it capped the eager lane at ~40 cases/s whatever the workers.
// A kill -9 reruns at most the cases of this window; none is recorded twice.
inline constexpr double kCommitEveryS = 0.25;
inline constexpr double kCheckReserveS = 30;  // --check-repros: the grace kept for one script run alone
// "Subject unusable": this many first cases, from at least two graph configurations, all
// failed the same way at the call (see Campaign::watch_usable).
inline constexpr size_t kUnusableAfter = 3;

inline uint32_t short_hash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  return h;
}

struct Ticket {
  std::string key, case_json;
  std::string graph;  // short hash of the case's graph_key (CampaignState::graphs)
  std::optional<std::pair<uint64_t, uint64_t>> sample;  // seed, index (in its lane's stream)
  Lane lane = Lane::COMPILED;  // the oracles it runs (lanes.hpp)
  Clock::time_point sent;      // dispatched (the parent's round trip, LaneTotals)
  std::vector<std::string> cells;  // coverage_cells of the case (CampaignState::coverage)
  bool dynamic = false;            // compiled with dynamic=True: a compile of tens of seconds on Liger

  Ticket() = default;
  explicit Ticket(const Case& c)
      : case_json(to_json(c, -1)), graph(fmt::format("{:08x}", short_hash(graph_key(c)))), cells(coverage_cells(c)),
        dynamic(c.compile.dynamic.value_or(false)) {}
};

struct Slot {
  enum State { STARTING, IDLE, BUSY } st = STARTING;
  std::unique_ptr<Process> proc = std::make_unique<Process>();
  Ticket t;
  std::string stage;
  Clock::time_point since;
  std::string log;
  std::string stacks;  // i15b: where its subject host dumps Python stacks (process/stacks.hpp)
  std::string gpu;  // CUDA_VISIBLE_DEVICES of this slot's workers ("" : inherit)
  std::optional<uint64_t> family;  // the sample family this slot works through (sampler.hpp)
  Lane lane = Lane::COMPILED;
  // Lent to a finding's analysis (findings/analyze.hpp): it takes no case while that runs in a
  // fresh worker of its own, so the campaign keeps to its number of busy workers.
  bool held = false;
};

// A started worker kept aside for the compiled lane (CampaignOptions::spare_workers).
struct Spare {
  std::unique_ptr<Process> proc = std::make_unique<Process>();
  bool started = false, ready = false;
  Clock::time_point since;
  std::string log, stacks, gpu;
  int spawned = 0, failures = 0;
};

// One finding's analysis, run in a thread of the parent with its own fresh worker; the thread
// touches nothing of the campaign's state, the loop applies its result (FindingBook::resolve).
struct AnalysisJob {
  AnalysisRequest req;
  static constexpr size_t kOwnWorker = static_cast<size_t>(-1);
  size_t slot = kOwnWorker;  // the slot it holds; kOwnWorker: it runs beside the lanes, holding none
  std::thread th;
  std::atomic<bool> done{false};
  AnalyzeResult result;
  // A deferred ladder walk instead of an analysis: its ladder key, and the walking run's reply.
  std::string walk_key;
  WorkerReply walk;
};

inline std::string tail(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(s.size() - n); }

// The last words a slot's worker left (a dead worker's, a dead subject's, a hung case's).
inline std::string log_tail(const Slot& s) { return tail(read_text(s.log), 16384); }

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& o) : o_(o), dir_(o.out) {
    launch_.exe = o.flce_exe;
    launch_.subject = o.subject;
    launch_.subject_path = o.subject_path;
    launch_.mem_gib = o.worker_mem_gib;
    launch_.baseline = o.baseline;
    launch_.baseline_path = o.baseline_path;
    // The workers share the CPUs the campaign may use (--cpus, else the affinity mask): ten
    // campaigns on one box must not each size Inductor's compile pool from all of its cores.
    launch_.threads = std::max(1, (o.cpus > 0 ? o.cpus : usable_cpus()) / std::max(o.workers, 1));
    // One compile cache per campaign (Inductor's and Triton's, both written by rename), under
    // --out so a resumed run finds it: what one worker compiled is a hit for the others.
    const char* shared = std::getenv("FLCE_SHARED_CACHE");
    if (!shared || std::string(shared) != "0") launch_.cache_dir = (fs::path(o.out) / "cache").string();
    // Over it, Triton's kernels of every campaign on this box: a nightly's dozen trees share most
    // of Liger's kernels, and each campaign's first cases would JIT them again.
    if (!launch_.cache_dir.empty()) launch_.triton_box = triton_box_dir();
  }
  CampaignResult run();

 private:
  // What follows exploration (campaign_post.cpp): the analyses left, the shrink, the reports.
  CampaignResult after_exploration(const std::vector<std::string>& gpus, const std::vector<LanePlan>& plan,
                                   int64_t resumed_cases);
  void open_dir();
  void load_state();
  void load_corpus();
  Ticket next_ticket(Slot& s);
  Ticket next_eager_ticket(Slot& s);
  SampleSpace sample_space() const;
  bool graph_busy(const std::string& graph, const Slot& except) const;
  bool dynamic_room(const Slot& asking) const;
  std::set<std::string> explained_now() const { return st_.explained.cells(); }
  void learn_ladder(const Ticket& t, const nlohmann::json& report);
  // One walk per ladder key: the first worker to ask walks it, the others wait for its ladder.
  void answer_ladder_query(Slot& s, const std::string& sig, bool known);
  std::string staged_as_known(const std::string& outcome, nlohmann::json& report) const;
  void release_walks(const Slot& s);  // the walker's case ended: its waiters get the ladder or walk
  void send_ladder_answer(Slot& s, const nlohmann::json& answer);
  std::map<std::string, Slot*> walking_;               // ladder key -> the slot walking it
  // ladder key -> slots waiting for it, with the case each asked for (a slot may have moved on)
  std::map<std::string, std::vector<std::pair<Slot*, std::string>>> waiters_;
  std::optional<uint64_t> next_in_family(uint64_t family);
  uint64_t family_size() const { return std::max<uint64_t>(o_.family_size, 1); }
  void start_worker(Process& p, const std::string& gpu, const std::string& log, const std::string& stacks);
  void spawn(Slot& s);
  // The spare: started once the first worker is ready (not to slow the campaign's start), swapped
  // into a slot whose worker died instead of a cold start (take_spare), then started again.
  void spawn_spare();
  bool take_spare(Slot& s);
  void restart(Slot& s) {  // a slot whose worker died: the ready spare, else a cold start
    if (!take_spare(s)) spawn(s);
  }
  void poll_spare(bool go);
  std::optional<Spare> spare_;
  int64_t spare_swaps_ = 0;
  void dispatch(Slot& s, Ticket t);
  void handle_line(Slot& s, const std::string& line);
  void worker_ended(Slot& s, const std::string& how);
  // `base`: a differential campaign's baseline reply for the case ({outcome, report}); null otherwise.
  void record(const Ticket& t, const std::string& outcome, const nlohmann::json& report, const std::string& detail,
              bool cuda_poisoned, const std::string& worker_log, double worker_ms = 0,
              const nlohmann::json& base = nullptr);
  // Analyses (findings/analyze.hpp): start one (holding a slot of its lane), or queue it when the
  // lane has lent all the slots it may; apply those that ended; wait for the rest at the end.
  void start_analysis(const AnalysisRequest& r);
  // Deferred ladder walks: queued by record(), started when an analysis worker is free and no
  // analysis waits (a finding's cause comes first), applied to the shared ladders when done;
  // after exploration they share the analyses' grace, and what it cuts stays unwalked.
  void queue_walk(const Ticket& t, const nlohmann::json& report);
  void start_walks(bool analyses_waiting);
  void apply_walk(const AnalysisJob& job);
  // Compiled failures whose ladder the lane did not walk (CampaignOptions::walk_in_lane false):
  // walked later on an analysis worker, once per ladder key (graph | signature).
  WalkQueue walks_;
  int64_t walks_done_ = 0;
  void poll_analyses();
  void finish_analyses(double budget_s);
  size_t max_analyses(Lane l) const;
  Lane lending_lane(Lane found) const;  // whose slots an analysis borrows (the eager lane while exploring)
  size_t lendable(Lane l) const;        // how many of them at once
  bool has_eager_lane() const;
  size_t own_jobs() const {  // analyses and walks running on analysis workers of their own
    return std::count_if(jobs_.begin(), jobs_.end(), [](const AnalysisJob& j) { return j.slot == AnalysisJob::kOwnWorker; });
  }
  // What a fresh analysis or walk worker runs: round-robin over the slots' GPUs, log `kind-N.log`.
  WorkerLaunch own_launch(const char* kind);
  size_t analysis_workers() const {
    return o_.analysis_workers >= 0 ? static_cast<size_t>(o_.analysis_workers)
                                    : static_cast<size_t>(std::max(1, o_.workers / 4));
  }
  void write_finding_json(const Finding& f);
  void save_state();  // the commit point: pending journal lines, then state.json
  void commit_due();  // save_state() when kCommitEveryS has passed since the last one
  std::string pending_journal_;
  Clock::time_point last_commit_ = Clock::now();
  double elapsed() const { return elapsed_before_ + std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool budget_left() const {
    return elapsed() < o_.minutes * 60 && (o_.max_cases < 0 || st_.cases_done + in_flight() < o_.max_cases) &&
           !enough_found();
  }
  // --stop-after-findings N: N new findings whose analysis has ended (their cause is settled).
  bool enough_found() const {
    if (o_.stop_after_findings <= 0) return false;
    return std::count_if(st_.findings.begin(), st_.findings.end(), [](const Finding& f) {
             return f.known.empty() && f.cause_status != CauseStatus::PENDING;
           }) >= o_.stop_after_findings;
  }
  int64_t in_flight() const {
    return std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.st == Slot::BUSY; });
  }
  void progress(bool force);

  CampaignOptions o_;
  WorkerLaunch launch_;  // what every worker of this campaign runs (spawn adds its gpu and log)
  fs::path dir_;
  int lock_fd_ = -1;
  CampaignState st_;
  std::vector<Ticket> corpus_;
  std::set<std::string> dispatched_;  // corpus keys handed out this run
  uint64_t cursor_ = 0;               // sample indices below it are all done
  std::set<uint64_t> owned_families_;  // families a slot is working through
  std::set<uint64_t> owned_groups_;    // eager groups a slot is working through
  std::set<uint64_t> eager_in_flight_;  // eager-lane sample indices handed out, not yet recorded
  int64_t graphs_this_run_ = 0;        // graph configurations first run by this invocation
  double first_ready_s_ = -1;          // when the first worker was ready (Python, torch, subject up)
  static constexpr size_t kWorkerStartsKept = 64;
  nlohmann::json worker_starts_ = nlohmann::json::array();  // each start: lane, ready_s, startup_ms
  void maybe_retire(const Ticket& t, const std::string& outcome);
  void learn_capabilities(const nlohmann::json& caps);
  void watch_usable(const Ticket& t, const std::string& outcome, const nlohmann::json& report);
  // Until some case produces outputs: the first cases' failures at the call (watch_usable), and
  // the families they came from (the next case is drawn from another family, so the rule sees
  // two configurations within kUnusableAfter cases).
  bool probing() const { return !st_.subject_ran && !early_.empty(); }
  std::vector<std::pair<std::string, std::string>> early_;  // outcome, graph
  std::set<uint64_t> early_families_;
  std::string unusable_;            // set: the subject cannot run at all; stop, exit 2
  std::set<std::string> lacks_;     // parameters the subject lacks (its workers' capabilities)
  std::optional<Semantics> semantics_;  // its contract's (unset: none declared, liger)
  std::set<DType> dtypes_;              // its contract's input dtypes (empty: all)
  std::map<DType, double> grad_filter_eps_;  // its contract's declared gradient filter (empty: exact)
  std::set<Device> grad_filter_devices_;     // ... on these devices (empty: all)
  bool grad_weight_split_ = false;           // its contract's grad_weight_form is "split"
  std::string softmax_dtype_ = "fp32";       // its contract's softmax_dtype
  std::vector<Slot> slots_;
  Clock::time_point t0_ = Clock::now(), last_progress_{};
  double elapsed_before_ = 0;
  int64_t cases_this_run_ = 0;
  int startup_failures_ = 0;
  std::string last_finding_;
  KnownList known_;                     // --known (findings/known.hpp)
  std::unique_ptr<FindingBook> book_;   // where sightings become findings
  std::list<AnalysisJob> jobs_;         // running analyses (a list: the threads keep their address)
  std::vector<AnalysisRequest> queued_;  // analyses waiting for a slot to borrow (lending_lane)
  volatile std::sig_atomic_t analysis_stop_ = 0;
  int analyses_started_ = 0;
  std::map<std::string, int> analyses_run_;  // "own" (an analysis worker) / "lent" (a lane's slot), "lent_<lane>"
  int64_t neighbours_dropped_ = 0;           // neighbours of findings the known list explains, not run
  bool finishing_ = false;  // exploration is over: queued analyses run whatever the subject did
  std::string pending_stacks_;  // i15b: stacks.txt of the timeout being recorded
  bool tty_ = false;
  // The subject-host zygote (process/zygote.hpp): one import for every host the campaign starts.
  void start_zygote();
  void poll_zygote();
  void stop_zygote();
  Process zygote_;  // its socket is launch_.zygote, which every host spec carries
  nlohmann::json zygote_info_;  // null: none; else its preload time, readiness, and what it refuses
};

}  // namespace flce::campaign_impl
