// The campaign parent: dispatches cases to worker processes, enforces the per-case
// timeout, turns worker deaths into findings, and commits state after every case.
#include "fuzz/campaign/campaign.hpp"

#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <deque>
#include <cstdio>
#include <fcntl.h>
#include <fmt/format.h>
#include <atomic>
#include <fstream>
#include <list>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "fuzz/campaign/campaign_report.hpp"
#include "fuzz/findings/campaign_shrink.hpp"
#include "fuzz/campaign/campaign_state.hpp"
#include "fuzz/campaign/coverage_guide.hpp"
#include "fuzz/campaign/finding_book.hpp"
#include "fuzz/campaign/walk_queue.hpp"
#include "process/zygote.hpp"
#include "case/case.hpp"
#include "case/memory.hpp"
#include "judge/signature.hpp"
#include "case/sampler.hpp"
#include "process/process.hpp"
#include "process/proc_tree.hpp"
#include "process/stacks.hpp"

namespace flce {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// A signature of judge/signatures.json (not a catch-all) breaks at one stage whatever the graph.
bool shares_ladder(const nlohmann::json& report) {
  bool known = false;
  for (auto& o : report.value("oracles", nlohmann::json::array()))
    if (o.value("oracle", "") == "compiled" && o.contains("signature"))
      known = o["signature"].value("known", false) && !o["signature"].value("generic", false);
  return known;
}
// The campaign's ladder key of a compiled failure: "*|<sig>" for a known signature (one walk per
// campaign), else "<graph>|<sig>" (an unknown bucket, a catch-all, wrong values: per graph).
std::string ladder_key(const std::string& graph, const nlohmann::json& report) {
  return (shares_ladder(report) ? std::string(kAnyGraph) : graph) + "|" + report.value("ladder_signature", "");
}

constexpr double kStartupTimeoutS = 300;  // Python + torch import on a loaded machine
constexpr int kMaxStartupFailures = 3;    // in a row: flce itself is broken, not a case
// Group commit: state.json and the journal are made durable at most this often (and at once
// for a new finding and at the end). A commit is two fsyncs and a directory sync, 26 ms on
// this machine's disk: per case, it capped the eager lane at ~40 cases/s whatever the workers.
// A kill -9 reruns at most the cases of this window; none is recorded twice.
constexpr double kCommitEveryS = 0.25;
constexpr double kCheckReserveS = 30;  // --check-repros: the grace kept for one script run alone
// "Subject unusable": this many first cases, from at least two graph configurations, all
// failed the same way at the call (see Campaign::watch_usable).
constexpr size_t kUnusableAfter = 3;

// An error that says the subject's function could not even be called: raised while the subject
// host prepared the call (phase "setup": loading the subject, reading its signature), or a
// TypeError of Python's argument binding at the call itself ("got an unexpected keyword
// argument", "takes 3 positional arguments but 4 were given", ...). Errors from inside a
// subject's computation never are.
bool call_error(const std::string& phase, const std::string& matched) {
  if (phase == "setup") return true;
  if (phase != "forward" || matched.rfind("builtins.TypeError: ", 0) != 0) return false;
  static const std::regex binding(
      "got an unexpected keyword argument|takes [0-9]+ positional arguments? but [0-9]+ (were|was) given|"
      "missing [0-9]+ required (positional|keyword-only) arguments?|got multiple values for argument|"
      "takes no keyword arguments|got some positional-only arguments passed as keyword arguments");
  return std::regex_search(matched, binding);
}

uint32_t short_hash(std::string_view s) {
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



std::string tail(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(s.size() - n); }

// The last words a slot's worker left (a dead worker's, a dead subject's, a hung case's).
std::string log_tail(const Slot& s) { return tail(read_text(s.log), 16384); }


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

void Campaign::open_dir() {
  std::error_code ec;
  fs::create_directories(dir_ / "findings", ec);
  fs::create_directories(dir_ / "workers", ec);
  if (ec) throw CampaignInputError(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
  lock_fd_ = ::open((dir_ / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
    throw CampaignInputError(fmt::format("{} is in use by another campaign (lock held)", dir_.string()));
}

void Campaign::load_state() {
  const fs::path sp = dir_ / "state.json";
  if (fs::exists(sp)) {
    try {
      st_ = parse_campaign_state(read_text(sp));
    } catch (const std::exception& e) {
      throw CampaignInputError(fmt::format("{}: not a campaign state ({})", sp.string(), e.what()));
    }
    // Input validation (#15): a resume with another flag than the campaign's is refused, naming
    // the flag, before anything under --out is written.
    auto changed = [&](const char* flag, const std::string& now, const std::string& was) {
      throw CampaignInputError(fmt::format("{} {}: {} holds a campaign with {} {}; use that or another --out", flag, now,
                                           dir_.string(), flag, was));
    };
    if (st_.subject != o_.subject) changed("--subject", o_.subject, "'" + st_.subject + "'");
    if (st_.subject_path != o_.subject_path) changed("--subject-path", o_.subject_path, "'" + st_.subject_path + "'");
    if (st_.family_size != o_.family_size)  // sample k would be another case
      changed("--family", std::to_string(o_.family_size), std::to_string(st_.family_size));
    if (st_.eager_group != o_.eager_group && !st_.eager_seeds.empty())  // likewise for the eager lane
      changed("--eager-group", std::to_string(o_.eager_group), std::to_string(st_.eager_group));
    if (!st_.seeds.empty() && !st_.seeds.count(o_.seed)) {  // merged states hold several seeds; any of them resumes
      std::string seeds;
      for (auto& [s, cur] : st_.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
      changed("--seed", std::to_string(o_.seed), seeds);
    }
    if (!st_.device.empty() && st_.device != (o_.cuda ? "cuda" : "cpu"))  // sample k would run elsewhere
      changed("--device", o_.cuda ? "cuda" : "cpu", "'" + st_.device + "'");
  } else {
    st_.subject = o_.subject;
    st_.subject_path = o_.subject_path;
    st_.family_size = o_.family_size;
  }
  st_.eager_group = o_.eager_group;
  st_.device = o_.cuda ? "cuda" : "cpu";
  if (!o_.subject_git.is_null()) st_.subject_git = o_.subject_git;  // the same tree (subject_path) by the latest ref
  // A finding directory is renamed into place before state.json names it; one the state
  // does not know is from a run killed in between: adopt it, so no finding is lost.
  for (auto& e : fs::directory_iterator(dir_ / "findings")) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".tmp-", 0) == 0) {
      fs::remove_all(e.path());
      continue;
    }
    if (!fs::exists(e.path() / "finding.json") || !fs::exists(e.path() / "case.json")) continue;
    // i15b: one parser for adopted findings (fuzzed: fuzz/targets/campaign_state_fuzzer.cpp)
    auto adopted = parse_adopted_finding(read_text(e.path() / "finding.json"), name);
    if (!adopted || std::any_of(st_.findings.begin(), st_.findings.end(), [&](const Finding& f) { return f.id == name; }))
      continue;
    Finding f = *adopted;
    st_.findings.push_back(f);
    if (!st_.first_finding_s || f.first_seen_s < *st_.first_finding_s) st_.first_finding_s = f.first_seen_s;
  }
  // Journal lines past the last commit belong to cases that will run again.
  const fs::path journal = dir_ / "cases.jsonl";
  if (fs::exists(journal) && fs::file_size(journal) > st_.journal_bytes) fs::resize_file(journal, st_.journal_bytes);
  elapsed_before_ = st_.elapsed_s;
  cursor_ = st_.seeds[o_.seed].next;
}

void Campaign::load_corpus() {
  if (o_.corpus.empty()) return;
  if (!fs::is_directory(o_.corpus)) throw CampaignInputError(fmt::format("--corpus {}: not a directory", o_.corpus));
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(o_.corpus))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& p : files) {
    Case c;
    try {
      c = from_json_file(p.string());
      try {
        check_fits_memory(c);
      } catch (const CaseError& e) {
        throw CaseError(e.field, p.string() + ": " + e.what());
      }
    } catch (const CaseError& e) {  // input validation (#15): the message already names the file
      throw CampaignInputError(fmt::format("--corpus: case {}", e.what()));
    } catch (const std::exception& e) {
      throw CampaignInputError(fmt::format("corpus case {}: {}", p.string(), e.what()));
    }
    Ticket t(c);
    // The content is part of the key: an edited corpus file is a new case.
    t.key = fmt::format("corpus:{}@{:08x}", p.filename().string(), short_hash(t.case_json));
    corpus_.push_back(t);
  }
}

std::optional<uint64_t> Campaign::next_in_family(uint64_t family) {
  const SeedCursor& cur = st_.seeds[o_.seed];
  for (uint64_t i = family * family_size(); i < (family + 1) * family_size(); ++i)
    if (!cur.done(i)) return i;
  return std::nullopt;
}

// Corpus cases first (any slot), then samples. A slot works through one family at a time, so
// the cases that share a compiled graph run in the worker that already compiled it; an
// abandoned family (a stop, a resume) is taken up again before new ones.
Ticket Campaign::next_ticket(Slot& s) {
  // Corpus cases go to the compiled lane, whose oracles they were pinned with; to the eager
  // lane only when it is the campaign's one lane (then they run eager, like every case).
  const bool any_compiled =
      std::any_of(slots_.begin(), slots_.end(), [](const Slot& x) { return x.lane == Lane::COMPILED; });
  const bool any_eager =
      std::any_of(slots_.begin(), slots_.end(), [](const Slot& x) { return x.lane == Lane::EAGER; });
  if (s.lane == Lane::COMPILED || !any_compiled)
    for (auto& t : corpus_)
      if (!st_.corpus_done.count(t.key) && !dispatched_.count(t.key)) {
        dispatched_.insert(t.key);
        Ticket c = t;
        c.lane = s.lane;
        return c;
      }
  // Neighbours of findings (coverage_guide.hpp) before new samples: a finding's surroundings
  // early, in the lane that found it (or in the campaign's one lane).
  for (auto& [key, case_json] : st_.neighbours)
    if (!dispatched_.count(key) && (lane_of_key(key) == s.lane || !any_compiled || !any_eager)) {
      Ticket t(from_json(case_json));
      if (s.lane == Lane::COMPILED && t.dynamic && !dynamic_room(s)) continue;  // taken up later
      dispatched_.insert(key);
      t.key = key;
      t.lane = s.lane;
      return t;
    }
  if (s.lane == Lane::EAGER) return next_eager_ticket(s);
  // While the first cases all fail at the call, the next one comes from another family (its
  // own configuration); the family is taken up again later, like an abandoned one.
  const bool hop = probing() && s.family && early_families_.count(*s.family);
  std::optional<uint64_t> index = s.family && !hop ? next_in_family(*s.family) : std::nullopt;
  // A dynamic family goes on only while no other slot holds the dynamic share; else this slot
  // leaves it open (taken up again later, like an abandoned one) and draws another.
  if (index && !dynamic_room(s) &&
      Ticket(guided_sample(o_.seed, *index, sample_space(), st_.coverage, o_.candidates, st_.family_picks,
                           explained_now()).c).dynamic)
    index.reset();
  if (!index) {
    if (s.family) owned_families_.erase(*s.family);
    SeedCursor& cur = st_.seeds[o_.seed];
    while (cur.done(cursor_)) ++cursor_;
    for (uint64_t fam = cursor_ / family_size();; ++fam) {
      if (owned_families_.count(fam) || (probing() && early_families_.count(fam))) continue;
      index = next_in_family(fam);
      if (!index) continue;
      // Two workers never start one graph configuration at once: the second would trace it and
      // walk its ladder again before the first's result is shared (CampaignState::ladders).
      const Ticket first(guided_sample(o_.seed, *index, sample_space(), st_.coverage, o_.candidates, st_.family_picks,
                                       explained_now()).c);
      if (graph_busy(first.graph, s) || (first.dynamic && !dynamic_room(s))) continue;
      s.family = fam;
      owned_families_.insert(fam);
      break;
    }
  }
  const GuidedPick pick =
      guided_sample(o_.seed, *index, sample_space(), st_.coverage, o_.candidates, st_.family_picks, explained_now());
  Ticket t(pick.c);
  t.sample = std::make_pair(o_.seed, *index);
  t.key = sample_key(o_.seed, Lane::COMPILED, *index) + (pick.candidate ? fmt::format("~{}", pick.candidate) : "");
  return t;
}

SampleSpace Campaign::sample_space() const {
  SampleSpace sp;
  sp.op_kinds = o_.subject.rfind("aten-dtype-out", 0) == 0;  // the op family only this subject runs
  sp.device = o_.cuda ? Device::CUDA : Device::CPU;
  sp.family_size = o_.family_size;
  sp.without = lacks_;  // what the subject's callable lacks is never drawn
  return sp;
}

// The eager lane: plain cases (no compile to amortize, so every case its own configuration)
// from the lane's own stream, the lowest index not done and not handed out; coverage-guided
// like the compiled lane's (coverage_guide.hpp).
Ticket Campaign::next_eager_ticket(Slot& s) {
  SeedCursor& cur = st_.eager_seeds[o_.seed];
  const uint64_t g = std::max<uint64_t>(st_.eager_group, 1);
  auto open_in = [&](uint64_t group) -> std::optional<uint64_t> {
    for (uint64_t i = group * g; i < (group + 1) * g; ++i)
      if (!cur.done(i) && !eager_in_flight_.count(i)) return i;
    return std::nullopt;
  };
  // A slot works through one group at a time (its Triton kernels stay warm in that process);
  // the next group is the lowest one nobody owns that still has cases.
  std::optional<uint64_t> i = s.family ? open_in(*s.family) : std::nullopt;
  if (!i) {
    if (s.family) owned_groups_.erase(*s.family);
    for (uint64_t group = cur.next / g;; ++group) {
      if (owned_groups_.count(group)) continue;
      if ((i = open_in(group))) {
        s.family = group;
        owned_groups_.insert(group);
        break;
      }
    }
  }
  eager_in_flight_.insert(*i);
  SampleSpace sp = sample_space();
  sp.family_size = g;
  sp.eager_groups = g > 1;
  const GuidedPick pick = guided_sample(lane_seed(o_.seed, Lane::EAGER), *i, sp, st_.coverage, o_.candidates,
                                        st_.eager_picks);
  Ticket t(pick.c);
  t.sample = std::make_pair(o_.seed, *i);
  t.key = sample_key(o_.seed, Lane::EAGER, *i) + (pick.candidate ? fmt::format("~{}", pick.candidate) : "");
  t.lane = Lane::EAGER;
  return t;
}

bool Campaign::graph_busy(const std::string& graph, const Slot& except) const {
  for (auto& x : slots_)
    if (&x != &except && x.st == Slot::BUSY && x.lane == Lane::COMPILED && x.t.graph == graph) return true;
  return false;
}

// Dynamic shapes are a dimension with a share of the compiled lane, not all of it: a
// dynamic=True compile of Liger's FLCE takes 25-45 s on the H200, and the neighbours of a
// dynamic finding are dynamic too. On main-s179 all four compiled slots took such neighbours at
// once and the lane finished no case for 40 s. A quarter of the lane's slots, at least one.
bool Campaign::dynamic_room(const Slot& asking) const {
  size_t lane = 0, busy = 0;
  for (auto& x : slots_) {
    if (x.lane != Lane::COMPILED) continue;
    ++lane;
    busy += &x != &asking && x.st == Slot::BUSY && x.t.dynamic;
  }
  return busy < std::max<size_t>(1, lane / 4);
}

void Campaign::start_worker(Process& p, const std::string& gpu, const std::string& log, const std::string& stacks) {
  WorkerLaunch l = launch_;
  l.gpu = gpu;
  l.log_path = log;
  ProcessSpec w = worker_spec(l);
  w.env.push_back(std::string(kStacksFileEnv) + "=" + stacks);  // i15b: inherited by the subject host
  p.spawn(w);
}

void Campaign::spawn(Slot& s) {
  start_worker(*s.proc, s.gpu, s.log, s.stacks);
  s.st = Slot::STARTING;
  s.since = Clock::now();
}

void Campaign::spawn_spare() {
  Spare& sp = *spare_;
  sp.log = (dir_ / "workers" / fmt::format("spare-{}.log", sp.spawned)).string();
  sp.stacks = (dir_ / "workers" / fmt::format("spare-{}.stacks", sp.spawned++)).string();
  sp.proc = std::make_unique<Process>();
  start_worker(*sp.proc, sp.gpu, sp.log, sp.stacks);
  sp.started = true;
  sp.ready = false;
  sp.since = Clock::now();
}

bool Campaign::take_spare(Slot& s) {
  if (!spare_ || !spare_->ready || !spare_->proc->alive() || s.lane != Lane::COMPILED || spare_->gpu != s.gpu)
    return false;
  std::swap(s.proc, spare_->proc);  // the slot gets the ready worker, with its log and stacks file
  std::swap(s.log, spare_->log);
  std::swap(s.stacks, spare_->stacks);
  s.st = Slot::IDLE;
  s.since = Clock::now();
  ++spare_swaps_;
  spawn_spare();
  return true;
}

void Campaign::poll_spare(bool go) {
  if (!spare_) return;
  Spare& sp = *spare_;
  if (!sp.started) {
    if (go && first_ready_s_ >= 0) spawn_spare();
    return;
  }
  if (!sp.proc->alive()) return;
  std::vector<std::string> lines;
  const bool open = sp.proc->read_lines(lines);
  for (auto& l : lines) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_object() && j.value("ready", false)) sp.ready = true;
  }
  const std::string how = open ? sp.proc->poll_exit() : sp.proc->stop(5.0);
  const bool stuck = !sp.ready && std::chrono::duration<double>(Clock::now() - sp.since).count() >= kStartupTimeoutS;
  if (how.empty() && !stuck) return;
  if (stuck) sp.proc->kill();
  sp.ready = false;
  // A spare that cannot start is no reason to stop: the slots restart cold as before.
  if (++sp.failures < kMaxStartupFailures && go) spawn_spare();
}

void Campaign::dispatch(Slot& s, Ticket t) {
  s.t = std::move(t);
  s.st = Slot::BUSY;
  s.stage = "queued";
  s.since = Clock::now();
  s.t.sent = s.since;
  nlohmann::json req{{"key", s.t.key}, {"case", nlohmann::json::parse(s.t.case_json)}, {"lane", lane_name(s.t.lane)}};
  if (s.t.lane == Lane::COMPILED) {  // what this graph's earlier cases learned: no worker walks a ladder twice
    if (auto known = ladders_for(st_.ladders, s.t.graph); !known.empty()) req["ladders"] = known;
    req["ladder_gate"] = true;  // and one that would walk a new one asks first (ladder_query)
  }
  s.proc->send(req.dump() + "\n");  // a dead worker shows up as its exit in the loop
}

void Campaign::handle_line(Slot& s, const std::string& line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;  // not ours
  if (j.contains("ready")) {
    if (!j["ready"].get<bool>()) {
      if (j.value("bad_input", false)) throw CampaignInputError(j.value("why", "worker refused the subject"));
      throw std::runtime_error("worker failed to start: " + j.value("why", ""));
    }
    if (st_.environment.empty() || st_.environment.is_null()) st_.environment = j["environment"];
    if (j.contains("capabilities")) learn_capabilities(j["capabilities"]);
    const double at = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (first_ready_s_ < 0) first_ready_s_ = at;
    if (worker_starts_.size() < kWorkerStartsKept)  // restarts too, up to a bound: where start-up time goes
      worker_starts_.push_back({{"lane", std::string(lane_name(s.lane))}, {"ready_s", std::round(at * 1000) / 1000},
                                {"startup_ms", j.value("startup_ms", nlohmann::json::object())},
                                {"host", j.value("host", "spawned")}});
    s.st = Slot::IDLE;
    startup_failures_ = 0;
    return;
  }
  if (s.st != Slot::BUSY || j.value("key", "") != s.t.key) return;
  if (j.value("bad_input", false)) throw CampaignInputError(j.value("why", "the worker refused the subject"));
  if (j.contains("stage")) {
    s.stage = j["stage"].get<std::string>();
    return;
  }
  if (j.contains("ladder_query")) {
    answer_ladder_query(s, j["ladder_query"].get<std::string>(), j.value("known", false));
    return;
  }
  std::string outcome = j.value("outcome", "flce-error@protocol");
  if (j.contains("report") && j["report"].value("ladder_deferred", false)) outcome = staged_as_known(outcome, j["report"]);
  std::string detail = j.value("error", "");
  if (j.contains("report"))
    for (auto& orc : j["report"].value("oracles", nlohmann::json::array())) {
      if (orc.contains("signature")) {
        detail = orc["signature"].value("matched", "");
        break;
      }
      if (!orc.value("pass", true))
        for (auto& out : orc.value("outputs", nlohmann::json::array()))
          if (out.value("finding", "ok") != "ok") {
            detail = fmt::format("{} {}: {}", orc.value("oracle", ""), out.value("output", ""), out.value("detail", ""));
            if (out.contains("verdict")) detail += " | " + out["verdict"].get<std::string>();  // judge/blame.hpp
            break;
          }
      if (!detail.empty()) break;
    }
  s.st = Slot::IDLE;
  const bool poisoned = j.value("cuda_poisoned", false), died = j.value("subject_died", false);
  // A dead subject process left its last words in the worker's log (the child's stderr tail).
  nlohmann::json report = j.value("report", nlohmann::json::object());
  // The calls before a finding (fuzz/findings/call_history.hpp): its report.json keeps them for the shrinker.
  if (j.contains("history")) report["history"] = j["history"];
  nlohmann::json base;  // a differential worker's baseline side (--baseline)
  if (j.contains("baseline_outcome"))
    base = {{"outcome", j["baseline_outcome"]}, {"report", j.value("baseline_report", nlohmann::json::object())}};
  record(s.t, outcome, report, detail.substr(0, 300), poisoned, died ? log_tail(s) : "", j.value("wall_ms", 0.0), base);
  release_walks(s);
  if (poisoned || died) {
    // The worker exits after reporting a poisoned context or a dead subject; handing it the
    // next case would record that case as a crash (seen on the GPU box: "crash:exit-0@queued").
    // Restart now.
    s.proc->stop(10.0);
    ++st_.worker_restarts;
    if (budget_left() && !g_stop) restart(s);
  }
}

// A worker exited: a crash if it had a case, a failed start if it never became ready.
void Campaign::worker_ended(Slot& s, const std::string& how) {
  const std::string log = log_tail(s);
  if (s.st == Slot::STARTING) {
    if (++startup_failures_ >= kMaxStartupFailures)
      throw std::runtime_error(fmt::format("workers fail to start ({}); last log:\n{}", how, tail(log, 4000)));
  } else if (s.st == Slot::BUSY) {
    s.st = Slot::IDLE;  // no longer in flight: the budget below counts it as done
    const std::string outcome = fmt::format("crash:{}@{}", how, s.stage);
    nlohmann::json rep{{"outcome", outcome}, {"exit", how}, {"stage", s.stage}, {"case_key", s.t.key}};
    record(s.t, outcome, rep, "worker died: " + how + " during " + s.stage, false, log);
    release_walks(s);
  }
  ++st_.worker_restarts;
  if (g_stop || !budget_left()) {
    s.st = Slot::IDLE;  // not respawned; the loop ends once nothing is in flight
    return;
  }
  restart(s);
}

void Campaign::record(const Ticket& t, const std::string& subject_outcome, const nlohmann::json& report,
                      const std::string& detail, bool cuda_poisoned, const std::string& worker_log, double worker_ms,
                      const nlohmann::json& base) {
  // A differential campaign counts and files the difference between the two sides.
  Change change = Change::NONE;
  const std::string outcome = base.is_object()
                                  ? differential_outcome(subject_outcome, base.value("outcome", ""), &change)
                                  : subject_outcome;
  ++st_.cases_done;
  ++cases_this_run_;
  ++st_.outcomes[outcome];
  if (t.lane == Lane::COMPILED && st_.graphs.insert(t.graph).second) ++graphs_this_run_;
  if (t.sample && t.lane == Lane::EAGER) {
    st_.eager_seeds[t.sample->first].mark(t.sample->second);
    eager_in_flight_.erase(t.sample->second);
  } else if (t.sample) {
    st_.seeds[t.sample->first].mark(t.sample->second);
  } else {
    st_.corpus_done.insert(t.key);
  }
  st_.lanes[std::string(lane_name(t.lane))].add(
      report.value("timing", nlohmann::json()), worker_ms,
      std::chrono::duration<double, std::milli>(Clock::now() - t.sent).count());
  if (t.lane == Lane::COMPILED) {
    learn_ladder(t, report);
    if (report.value("ladder_deferred", false)) queue_walk(t, report);
    // What this configuration's compile showed, per field value (explained.hpp).
    std::string known_failure;
    if (is_compile_failure(subject_outcome))
      for (auto& o : report.value("oracles", nlohmann::json::array()))
        if (o.value("oracle", "") == "compiled" && o.contains("signature") && o["signature"].value("known", false))
          known_failure = o["signature"].value("id", "");
    st_.explained.add(t.cells, t.graph, known_failure);
  }
  Finding* f = nullptr;
  bool fresh = false;
  if (is_finding(outcome)) {
    Sighting sg{t.key, std::string(lane_name(t.lane)), t.case_json, outcome, detail, worker_log, pending_stacks_,
                report, cuda_poisoned, change, base.is_object() ? base.value("outcome", "") : "",
                base.is_object() ? base.value("report", nlohmann::json()) : nlohmann::json()};
    FindingBook::Filed filed = book_->file(sg, elapsed());
    f = filed.finding;
    fresh = filed.fresh;
    if (filed.analyze) start_analysis(*filed.analyze);
  }
  st_.coverage.add(std::string(lane_name(t.lane)), t.cells, is_finding(outcome));
  std::erase_if(st_.neighbours, [&](const auto& n) { return n.first == t.key; });
  watch_usable(t, subject_outcome, report);
  maybe_retire(t, subject_outcome);
  if (fresh && o_.candidates > 1 && st_.subject_ran) {  // (a subject that never ran has no neighbourhood)
    int k = 0;
    const std::string lane_tag = t.lane == Lane::EAGER ? "/eager" : "";  // lane_of_key reads it back
    for (const Case& n : neighbours(from_json(t.case_json), lacks_))
      st_.neighbours.emplace_back(fmt::format("neighbour:{}{}#{}", f->id, lane_tag, k++), to_json(n, -1));
  }
  nlohmann::json jl{{"key", t.key}, {"lane", lane_name(t.lane)}, {"graph", t.graph}, {"outcome", outcome},
                    {"at", utc_now()}, {"campaign_s", elapsed()}};
  // Where a case's time went (profiling throughput): each oracle's wall time, in ms.
  for (auto& o : report.value("oracles", nlohmann::json::array()))
    if (o.contains("wall_ms")) jl["ms"][o.value("oracle", "?")] = std::lround(o["wall_ms"].get<double>());
  if (report.value("ladder_memoized", false)) jl["ladder_memoized"] = true;
  if (t.dynamic) jl["dynamic"] = true;
  pending_journal_ += jl.dump() + "\n";
  if (fresh) save_state();  // a new finding is committed at once
  else commit_due();        // the case's commit point (group commit)
  // A repeat's count reaches finding.json at the end of the run (state.json has it at once):
  // one durable write per hit was a commit's cost again.
  if (fresh) {
    last_finding_ = outcome;
    if (!o_.quiet) {
      std::fprintf(stderr, "%snew finding after %.1f s: %s (%s) -> %s%s\n", tty_ ? "\r\033[K" : "", f->first_seen_s,
                   outcome.c_str(), t.key.c_str(), (dir_ / "findings" / f->id).c_str(),
                   f->cause_status == CauseStatus::PENDING ? " (analyzing its cause)" : "");
      last_progress_ = {};
    }
  }
}

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

// A compile failure ("<signature>@compiled:<stage>") is what a family retires on; judge
// findings, crashes and timeouts depend on the values or the process, so they never do. The
// count is the campaign's, per graph configuration (CampaignState::ladders): a family whose
// graph another family already showed the failure for retires at its first case of it.
void Campaign::maybe_retire(const Ticket& t, const std::string& outcome) {
  if (!t.sample || t.lane != Lane::COMPILED || o_.retire_after <= 0 || family_size() <= 1) return;
  if (!is_compile_failure(outcome)) return;
  auto seen = st_.compile_failures.find(t.graph + "|" + outcome.substr(0, outcome.find('@')));
  if (seen == st_.compile_failures.end() || seen->second < o_.retire_after) return;
  const uint64_t family = t.sample->second / family_size();
  SeedCursor& cur = st_.seeds[t.sample->first];
  int64_t skipped = 0;
  for (uint64_t i = family * family_size(); i < (family + 1) * family_size(); ++i)
    if (!cur.done(i) && i != t.sample->second) {
      cur.mark(i);
      ++skipped;
    }
  if (skipped) {
    ++st_.families_retired;
    st_.cases_retired += skipped;
  }
}

// A compiled case whose run raised: the ladder it walked becomes the campaign's for (graph,
// signature), sent with every later case of the graph; one that reused it counts a hit and
// the rungs it did not trace.
void Campaign::learn_ladder(const Ticket& t, const nlohmann::json& report) {
  const std::string sig = report.value("ladder_signature", "");
  const nlohmann::json ladder = report.value("ladder", nlohmann::json::array());
  if (sig.empty()) return;
  ++st_.compile_failures[t.graph + "|" + sig];  // what retirement counts: sightings per graph
  if (ladder.empty() || report.value("ladder_deferred", false)) return;  // one rung so far (queue_walk)
  SharedLadder& l = st_.ladders[ladder_key(t.graph, report)];
  LaneTotals& lane = st_.lanes[std::string(lane_name(Lane::COMPILED))];
  if (report.value("ladder_memoized", false)) {
    ++l.hits;
    ++lane.memo_hits;
    lane.traces_saved += static_cast<int64_t>(ladder.size()) - 1;  // every rung but the compiled run's own
  } else {
    ++l.walks;
    l.ladder = ladder;
    l.first_failing_stage = report.value("first_failing_stage", "");
  }
}

// A known signature whose walk waits off the lane: its outcome takes the stage the known list
// gives it (known_stage), so that its sightings before and after the walk are one finding.
std::string Campaign::staged_as_known(const std::string& outcome, nlohmann::json& report) const {
  const std::string sig = report.value("ladder_signature", "");
  const std::string head = sig + "@compiled:";
  if (sig.empty() || outcome.rfind(head, 0) != 0 || !shares_ladder(report)) return outcome;
  const std::string torch = st_.environment.is_object() ? st_.environment.value("torch", "") : "";
  const auto stage = known_stage(known_, sig, torch, o_.cuda, report.value("subject_version", ""));
  if (!stage || head + stage->first == outcome) return outcome;
  report["first_failing_stage"] = stage->first;
  report["first_failing_stage_from"] = stage->second;
  report["outcome"] = head + stage->first;
  return head + stage->first;
}

void Campaign::send_ladder_answer(Slot& s, const nlohmann::json& answer) {
  s.proc->send(nlohmann::json{{"key", s.t.key}, {"ladder_answer", answer}}.dump() + "\n");
}

void Campaign::answer_ladder_query(Slot& s, const std::string& sig, bool known) {
  const std::string key = (known ? std::string(kAnyGraph) : s.t.graph) + "|" + sig;
  if (auto it = st_.ladders.find(key); it != st_.ladders.end() && !it->second.ladder.empty()) {
    send_ladder_answer(s, {{"walk", false}, {"ladder", it->second.ladder}, {"first_failing_stage", it->second.first_failing_stage}});
    return;
  }
  // Known or not, a first walk goes off the lane (queue_walk): on the H200 (seed 157) a known
  // signature's walk in the lane of a dynamic-shape case ran at its eager rung for the whole
  // --case-timeout (120 of 300 s) in seven of ten campaigns side by side.
  if (!o_.walk_in_lane && analysis_workers() > 0) {
    send_ladder_answer(s, {{"walk", false}, {"defer", true}});
    return;
  }
  if (walking_.count(key)) {
    waiters_[key].emplace_back(&s, s.t.key);
    return;
  }
  walking_[key] = &s;
  send_ladder_answer(s, {{"walk", true}});
}

void Campaign::release_walks(const Slot& s) {
  for (auto it = walking_.begin(); it != walking_.end();) {
    if (it->second != &s) {
      ++it;
      continue;
    }
    const std::string key = it->first;
    it = walking_.erase(it);
    auto waiting = std::move(waiters_[key]);
    waiters_.erase(key);
    auto l = st_.ladders.find(key);
    for (auto& [w, case_key] : waiting) {
      if (w->st != Slot::BUSY || w->t.key != case_key) continue;  // that case ended another way
      if (l != st_.ladders.end() && !l->second.ladder.empty()) {
        send_ladder_answer(*w, {{"walk", false}, {"ladder", l->second.ladder},
                                {"first_failing_stage", l->second.first_failing_stage}});
      } else if (!walking_.count(key)) {  // the walk was lost (a crash, a timeout): the next one walks
        walking_[key] = w;
        send_ladder_answer(*w, {{"walk", true}});
      } else {
        waiters_[key].emplace_back(w, case_key);
      }
    }
  }
}

// The capabilities a worker read from the subject's signature: what the campaign stops drawing.
// Every worker runs the same subject; should two disagree, what any of them lacks is avoided.
void Campaign::learn_capabilities(const nlohmann::json& caps) {
  if (!caps.is_object() || !caps.value("known", false)) return;
  for (auto& p : caps.value("lacks", nlohmann::json::array()))
    if (p.is_string()) lacks_.insert(p.get<std::string>());
  nlohmann::json lacks = nlohmann::json::array();  // in the subjects' parameter order
  for (auto& p : flce_parameters())
    if (lacks_.count(p)) lacks.push_back(p);
  for (auto& p : lacks_)
    if (std::find(flce_parameters().begin(), flce_parameters().end(), p) == flce_parameters().end()) lacks.push_back(p);
  nlohmann::json c{{"params", caps.value("params", nlohmann::json::array())}, {"lacks", lacks},
                   {"callable", caps.value("callable", "")}};
  if (st_.capabilities != c) {
    st_.capabilities = c;
    if (!o_.quiet && !lacks_.empty()) {
      std::string names;
      for (auto& p : lacks) names += (names.empty() ? "" : ", ") + p.get<std::string>();
      std::fprintf(stderr, "%scampaign: subject %s lacks %s: no sampled case uses them\n", tty_ ? "\r\033[K" : "",
                   o_.subject.c_str(), names.c_str());
    }
  }
}

// "Subject unusable": before any case has produced outputs, the first kUnusableAfter cases
// (unsupported ones aside) all failed in eager with one outcome, at the call (call_error), from
// at least two graph configurations. A subject that gets as far as computing anything, fails in
// two ways, or fails only in one configuration is never unusable: its failures are findings.
void Campaign::watch_usable(const Ticket& t, const std::string& outcome, const nlohmann::json& report) {
  if (st_.subject_ran || !unusable_.empty()) return;
  const nlohmann::json oracles = report.value("oracles", nlohmann::json::array());
  const nlohmann::json* eager = nullptr;
  for (auto& o : oracles) {
    if (o.value("status", "") == "ok") {
      st_.subject_ran = true;
      early_.clear();
      return;
    }
    if (o.value("oracle", "") == "eager") eager = &o;
  }
  if (is_unsupported_outcome(outcome)) return;  // cannot run here: says nothing either way
  const nlohmann::json sig = eager && eager->value("status", "") == "error" && eager->contains("signature")
                                 ? (*eager)["signature"] : nlohmann::json::object();
  if (!call_error(sig.value("phase", ""), sig.value("matched", "")) ||
      (!early_.empty() && early_.front().first != outcome)) {
    st_.subject_ran = true;  // it fails like a subject that runs: from here on, every failure is a finding
    early_.clear();
    return;
  }
  early_.push_back({outcome, t.graph});
  if (t.sample && t.lane == Lane::COMPILED) early_families_.insert(t.sample->second / family_size());
  std::set<std::string> graphs;
  for (auto& [o, g] : early_) graphs.insert(g);
  if (early_.size() >= kUnusableAfter && graphs.size() >= 2)
    unusable_ = fmt::format("{} (the first {} cases, {} configurations, all failed at the call in eager: {})",
                            sig.value("matched", outcome), early_.size(), graphs.size(), outcome);
}

void Campaign::write_finding_json(const Finding& f) { write_finding_json_to(dir_ / "findings" / f.id, f); }

void Campaign::save_state() {
  if (!pending_journal_.empty()) {
    st_.journal_bytes = append_durable(dir_ / "cases.jsonl", pending_journal_);
    pending_journal_.clear();
  }
  last_commit_ = Clock::now();
  st_.elapsed_s = elapsed();
  write_atomic(dir_ / "state.json", st_.to_json().dump(1) + "\n");
}

void Campaign::commit_due() {
  if (std::chrono::duration<double>(Clock::now() - last_commit_).count() >= kCommitEveryS) save_state();
}

void Campaign::progress(bool force) {
  if (!tty_) return;
  auto now = Clock::now();
  if (!force && now - last_progress_ < std::chrono::milliseconds(500)) return;
  last_progress_ = now;
  const double run_s = std::chrono::duration<double>(now - t0_).count();
  std::string busy;
  for (auto& s : slots_) busy += s.st == Slot::BUSY ? "R" : s.st == Slot::STARTING ? "s" : ".";
  std::fprintf(stderr, "\r\033[K%lld cases (%.2f/s) | %zu distinct | %zu findings | workers %s | %s | last: %s",
               static_cast<long long>(st_.cases_done), run_s > 0 ? static_cast<double>(cases_this_run_) / run_s : 0.0,
               st_.outcomes.size(), st_.findings.size(), busy.c_str(),
               fmt::format("{:.0f}s left", std::max(0.0, o_.minutes * 60 - elapsed())).c_str(),
               last_finding_.empty() ? "-" : last_finding_.c_str());
  std::fflush(stderr);
}

// FLCE_ZYGOTE=0: every subject host is spawned and imports for itself, as before the zygote.
void Campaign::start_zygote() {
  if (const char* z = std::getenv("FLCE_ZYGOTE"); z && std::string(z) == "0") return;
  const std::string socket = new_zygote_socket_path();
  if (socket.empty()) return;
  WorkerLaunch l = launch_;
  l.log_path = (dir_ / "workers" / "zygote.log").string();
  try {
    zygote_.spawn(zygote_spec(l, socket, (dir_ / "workers" / "zygote.stacks").string()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "campaign: no zygote (%s): each subject host imports for itself\n", e.what());
    return;
  }
  launch_.zygote = socket;
  zygote_info_ = {{"ready_s", nullptr}};
}

void Campaign::poll_zygote() {
  if (!zygote_.alive()) return;
  std::vector<std::string> lines;
  zygote_.read_lines(lines);
  for (auto& l : lines) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (!j.is_object() || j.value("zygote", "") != "ready") continue;
    zygote_info_["ready_s"] = std::round(elapsed() * 1000) / 1000;
    zygote_info_["preload_ms"] = j.value("preload_ms", 0.0);
    zygote_info_["phases_ms"] = j.value("phases_ms", nlohmann::json::object());
    zygote_info_["refusing"] = j.value("refusing", nlohmann::json());
  }
  // A zygote that died only costs speed: its hosts' owners see their hosts die, the next are spawned.
  if (std::string how = zygote_.poll_exit(); !how.empty()) zygote_info_["ended"] = how;
}

void Campaign::stop_zygote() {
  if (launch_.zygote.empty()) return;
  poll_zygote();
  if (zygote_.alive()) zygote_.stop(2.0);  // EOF on its stdin; what it forked and still runs dies with it
  std::error_code ec;
  fs::remove_all(fs::path(launch_.zygote).parent_path(), ec);
}

CampaignResult Campaign::run() {
  open_dir();
  load_state();
  load_corpus();
  try {  // bad --known input is refused before anything runs
    known_ = load_known(o_.known, o_.subject);
  } catch (const KnownInputError& e) {
    throw CampaignInputError(e.what());
  }
  book_ = std::make_unique<FindingBook>(dir_, st_, known_, o_.cuda);
  std::vector<std::string> gpus = visible_gpus();  // checked before state.json is rewritten
  if (o_.gpus >= 0 && static_cast<size_t>(o_.gpus) < gpus.size()) gpus.resize(static_cast<size_t>(o_.gpus));
  if (o_.gpus > 0 && gpus.empty())
    throw CampaignInputError(fmt::format("--gpus {}: no GPU visible here (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus)", o_.gpus));
  ++st_.runs;
  tty_ = !o_.quiet && ::isatty(2) && !std::getenv("CI");
  const int64_t resumed_cases = st_.cases_done;
  if (st_.runs > 1)  // even with --quiet: a log should show that this run continued another
    std::fprintf(stderr, "resuming %s: %lld cases done, next sample index %llu (seed %llu), %zu findings, %.1f s spent\n",
                 dir_.c_str(), static_cast<long long>(st_.cases_done), static_cast<unsigned long long>(cursor_),
                 static_cast<unsigned long long>(o_.seed), st_.findings.size(), st_.elapsed_s);
  save_state();

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;  // no SA_RESTART: poll() returns to look at g_stop
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  const std::vector<LanePlan> plan = o_.lanes.empty() ? std::vector<LanePlan>{{Lane::COMPILED, o_.workers}} : o_.lanes;
  for (auto& p : plan) {
    st_.lanes[std::string(lane_name(p.lane))].workers = p.workers;
    for (int i = 0; i < p.workers && budget_left(); ++i) slots_.emplace_back().lane = p.lane;
  }
  if (!slots_.empty()) start_zygote();
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].log = (dir_ / "workers" / fmt::format("worker-{}.log", i)).string();
    slots_[i].stacks = (dir_ / "workers" / fmt::format("worker-{}.stacks", i)).string();
    if (!gpus.empty()) slots_[i].gpu = gpus[i % gpus.size()];
    spawn(slots_[i]);
  }
  {
    const auto compiled = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.lane == Lane::COMPILED; });
    const int want = o_.spare_workers >= 0 ? o_.spare_workers : (o_.cuda ? 1 : 0);
    if (want > 0 && compiled != slots_.end()) {
      spare_.emplace();
      spare_->gpu = compiled->gpu;
    }
  }
  if (!gpus.empty() && !o_.quiet)
    std::fprintf(stderr, "campaign: %d workers (%s) over %zu GPUs (CUDA_VISIBLE_DEVICES per worker)\n", o_.workers,
                 lanes_text(plan).c_str(), std::min(gpus.size(), slots_.size()));
  st_.unusable.clear();  // a resumed campaign gets another look at its subject
  // Findings of an earlier run whose analysis did not finish: analyzed again first.
  for (auto& r : book_->pending_requests()) start_analysis(r);
  for (;;) {
    if (!unusable_.empty())  // nothing more to learn: cases in flight are abandoned, not recorded
      for (auto& s : slots_)
        if (s.st != Slot::IDLE) {
          s.proc->kill();
          s.st = Slot::IDLE;
        }
    const bool go = !g_stop && budget_left() && unusable_.empty();
    if (!g_stop && elapsed() >= o_.minutes * 60) {
      // Out of time: cases in flight are killed, not waited for (a compile can take minutes on
      // a loaded box), and counted by the step they were in; a resume runs them.
      for (auto& s : slots_)
        if (s.st == Slot::BUSY) {
          s.proc->kill();
          s.st = Slot::IDLE;
          ++st_.abandoned[s.stage];
        }
    }
    if (g_stop)
      for (auto& s : slots_)
        if (s.st != Slot::IDLE) {
          s.proc->kill();
          s.st = Slot::IDLE;
        }
    poll_analyses();  // first: an analysis that ended gives its slot back to this round's dispatch
    for (auto& s : slots_)
      if (go && s.st == Slot::IDLE && !s.held && s.proc->alive() && budget_left()) dispatch(s, next_ticket(s));
    bool active = std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) {
      return s.st == Slot::BUSY || (go && s.st == Slot::STARTING);
    }) || (go && !jobs_.empty());
    if (!active) break;

    std::vector<pollfd> fds;
    for (auto& s : slots_)
      if (s.proc->alive()) fds.push_back({s.proc->out_fd(), POLLIN, 0});
    if (spare_ && spare_->started && spare_->proc->alive()) fds.push_back({spare_->proc->out_fd(), POLLIN, 0});
    double wait_s = std::max(0.0, o_.minutes * 60 - elapsed());
    for (auto& s : slots_) {
      if (s.st == Slot::IDLE) continue;
      double lim = s.st == Slot::BUSY ? o_.case_timeout_s : kStartupTimeoutS;
      wait_s = std::min(wait_s, lim - std::chrono::duration<double>(Clock::now() - s.since).count());
    }
    int ms = static_cast<int>(std::clamp(wait_s * 1000, 0.0, 500.0)) + 1;
    ::poll(fds.data(), fds.size(), ms);

    for (auto& s : slots_) {
      if (!s.proc->alive()) continue;
      std::vector<std::string> lines;
      bool open = s.proc->read_lines(lines);
      for (auto& l : lines) handle_line(s, l);
      std::string how = open ? s.proc->poll_exit() : s.proc->stop(5.0);
      if (!how.empty()) {
        // Its last reply can land between the read above and the exit (a poisoned case's
        // report, larger than the pipe, then exit 0): handle it before calling the exit a crash.
        const auto restarts = st_.worker_restarts;
        std::vector<std::string> last;
        s.proc->read_lines(last);
        for (auto& l : last) handle_line(s, l);
        if (st_.worker_restarts == restarts) worker_ended(s, how);  // else handle_line already dealt with the exit
        continue;
      }
      const double age = std::chrono::duration<double>(Clock::now() - s.since).count();
      if (s.st == Slot::BUSY && age >= o_.case_timeout_s) {
        // i15b: the hung case's Python stacks first (the worker forwards the signal), then the kill.
        pending_stacks_ = stacks_report(
            fmt::format("stage {} (the step the worker announced last), case {}, killed after --case-timeout {} s",
                        s.stage, s.t.key, o_.case_timeout_s),
            request_stacks(s.proc->pid(), s.stacks),
            process_tree_report(s.proc->pid(), 16, {{s.proc->pid(), adopted_host(s.stacks)}}));
        s.proc->kill();
        const std::string outcome = "timeout@" + s.stage;
        nlohmann::json rep{{"outcome", outcome}, {"stage", s.stage}, {"case_key", s.t.key},
                           {"case_timeout_s", o_.case_timeout_s}, {"stacks", "stacks.txt"}};
        s.st = Slot::IDLE;
        record(s.t, outcome, rep, fmt::format("no result within {} s (in {})", o_.case_timeout_s, s.stage), false,
               log_tail(s));
        release_walks(s);
        pending_stacks_.clear();
        ++st_.worker_restarts;
        if (budget_left() && !g_stop) restart(s);
      } else if (s.st == Slot::STARTING && age >= kStartupTimeoutS) {
        worker_ended(s, s.proc->kill());
      }
    }
    poll_spare(go);
    poll_zygote();
    if (!pending_journal_.empty()) commit_due();
    progress(false);
  }
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
  if (!o_.baseline.empty()) rs.baseline = o_.baseline + (o_.baseline_path.empty() ? "" : " (" + o_.baseline_path + ")");
  write_reports(dir_, st_, rs);
  std::printf("%s", summary_text(dir_, st_, rs).c_str());
  ::close(lock_fd_);
  if (!unusable_.empty())  // bad input, not findings: state and reports stay as written
    throw CampaignInputError(fmt::format("subject unusable: {}; report: {}", unusable_, (dir_ / "report.md").string()));
  CampaignResult res{static_cast<int64_t>(st_.findings.size()), st_.cases_done};
  for (auto& f : st_.findings) (f.known.empty() ? res.new_findings : res.known_findings)++;
  return res;
}

}  // namespace

CampaignResult run_campaign(const CampaignOptions& o) {
  if (!(o.minutes > 0)) throw CampaignInputError("--minutes must be > 0");
  if (o.workers < 1 || o.workers > 64) throw CampaignInputError("--workers must be in [1, 64]");
  if (!(o.case_timeout_s > 0)) throw CampaignInputError("--case-timeout must be > 0");
  if (o.max_cases < -1 || o.max_cases == 0) throw CampaignInputError("--max-cases must be >= 1");
  if (o.worker_mem_gib < 0) throw CampaignInputError("--worker-mem-gib must be >= 0");
  if (o.gpus < -1) throw CampaignInputError("--gpus must be >= 0 (or omitted: all visible)");
  if (o.minimize_s < 0) throw CampaignInputError("--minimize-s must be >= 0");
  if (o.out.empty() || o.subject.empty()) throw CampaignInputError("--out and --subject are required");
  CampaignOptions lanes = o;
  if (!o.lanes.empty()) {
    lanes.workers = 0;
    for (auto& p : o.lanes) {
      if (p.workers < 1) throw CampaignInputError(fmt::format("--lanes: lane {} needs >= 1 worker", lane_name(p.lane)));
      lanes.workers += p.workers;
    }
    if (lanes.workers > 64) throw CampaignInputError("--lanes: at most 64 workers in all");
  }
  Campaign c(lanes);
  return c.run();
}

}  // namespace flce
