// The campaign parent: dispatches cases to worker processes, enforces the per-case
// timeout, turns worker deaths into findings, and commits state after every case.
// (The Campaign class is in campaign_impl.hpp; its slots, analyses and post-exploration phase
// in campaign_slots.cpp, campaign_analyses.cpp and campaign_post.cpp.)
#include "fuzz/campaign/campaign.hpp"

#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <regex>

#include "case/contract.hpp"
#include "case/memory.hpp"
#include "fuzz/campaign/campaign_impl.hpp"
#include "fuzz/campaign/case_compare.hpp"
#include "fuzz/campaign/campaign_report.hpp"
#include "process/proc_tree.hpp"
#include "process/stacks.hpp"

namespace flce::campaign_impl {

namespace {

void on_stop_signal(int) { g_stop = 1; }

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

}  // namespace

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
        // Judged by the subject's contract, like every sampled case; the key stays the file's.
        Ticket c(under_contract(from_json(t.case_json), sample_space()));
        c.key = t.key;
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
  sp.semantics = semantics_;  // what it promises (its contract), never Liger's by default
  sp.dtypes = dtypes_;
  sp.grad_filter_eps = grad_filter_eps_;
  sp.grad_filter_devices = grad_filter_devices_;
  sp.grad_weight_split = grad_weight_split_;
  sp.softmax_dtype = softmax_dtype_;
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
  if (outcome == "pass")  // passes that needed the declared approximation: counted apart
    for (auto& o : report.value("oracles", nlohmann::json::array()))
      for (auto& out : o.value("outputs", nlohmann::json::array()))
        if (out.contains("approximated")) {
          auto& a = st_.approximated[o.value("oracle", "?") + ":" + out.value("output", "?")];
          ++a.cases;
          a.worst_over_exact = std::max(a.worst_over_exact, out["approximated"].value("err_over_exact_bound", 0.0));
        }
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
      st_.neighbours.emplace_back(fmt::format("neighbour:{}{}#{}", f->id, lane_tag, k++),
                                  to_json(under_contract(n, sample_space()), -1));
  }
  nlohmann::json jl{{"key", t.key}, {"lane", lane_name(t.lane)}, {"graph", t.graph}, {"outcome", outcome},
                    {"at", utc_now()}, {"campaign_s", elapsed()}};
  // Where a case's time went (profiling throughput): each oracle's wall time, in ms.
  for (auto& o : report.value("oracles", nlohmann::json::array()))
    if (o.contains("wall_ms")) jl["ms"][o.value("oracle", "?")] = std::lround(o["wall_ms"].get<double>());
  if (report.value("ladder_memoized", false)) jl["ladder_memoized"] = true;
  if (outcome == "pass" && report.contains("approximated")) jl["approximated"] = report["approximated"];
  if (t.dynamic) jl["dynamic"] = true;
  // What flce conformance reads back: the case's field values, its finding, its inputs and loss.
  jl["cells"] = t.cells;
  if (f) jl["finding"] = f->id;
  jl.update(comparable_fields(t.case_json, report));
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
  // The contract (contract.py): every case from here on carries its semantics and dtypes.
  const nlohmann::json contract = caps.value("contract", nlohmann::json());
  c["contract"] = contract;
  if (contract.is_object()) {
    SampleSpace declared;
    apply_contract(contract, declared);  // case/contract.hpp: the gate reads contracts the same way
    semantics_ = declared.semantics;
    dtypes_.insert(declared.dtypes.begin(), declared.dtypes.end());
    for (auto& [d, eps] : declared.grad_filter_eps) grad_filter_eps_[d] = eps;
    grad_filter_devices_.insert(declared.grad_filter_devices.begin(), declared.grad_filter_devices.end());
    grad_weight_split_ = declared.grad_weight_split;
    softmax_dtype_ = declared.softmax_dtype;
  }
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
  return after_exploration(gpus, plan, resumed_cases);
}

}  // namespace flce::campaign_impl

namespace flce {

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
  campaign_impl::Campaign c(lanes);
  return c.run();
}

}  // namespace flce
