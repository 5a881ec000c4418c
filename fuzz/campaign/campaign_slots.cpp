// The campaign's worker slots (campaign_impl.hpp): starting a slot's worker and the spare, handing
// it a case, reading its replies, a worker's death; the backend ladders the slots share (one walk
// per ladder key); the subject-host zygote every worker's host forks from.
#include <cmath>
#include <cstdio>

#include "fuzz/campaign/campaign_impl.hpp"
#include "process/stacks.hpp"
#include "process/zygote.hpp"

namespace flce::campaign_impl {

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

// ---- the shared ladders: one walk per ladder key (its graph and signature; any graph for a known one)

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

// ---- the zygote

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

}  // namespace flce::campaign_impl
