#include "fuzz/campaign/finding_book.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "fuzz/campaign/campaign_report.hpp"
#include "judge/signature.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxParked = 256;  // sightings waiting for one analysis; more are counted only

constexpr std::pair<std::string_view, Change> kChanges[] = {
    {"regressed:", Change::REGRESSED}, {"fixed:", Change::FIXED}, {"changed:", Change::CHANGED}};

}  // namespace

std::string differential_outcome(const std::string& subject, const std::string& baseline, Change* change) {
  *change = Change::NONE;
  if (subject == baseline) return subject == "pass" || !is_finding(subject) ? subject : "same:" + subject;
  const bool s_fails = is_finding(subject), b_fails = is_finding(baseline);
  if (!s_fails && !b_fails) return subject;  // pass vs unsupported: nothing to compare
  if (s_fails && !b_fails) return *change = Change::REGRESSED, "regressed:" + subject;
  if (!s_fails) return *change = Change::FIXED, "fixed:" + baseline;
  return *change = Change::CHANGED, "changed:" + subject;
}

std::optional<FailureClass> sighting_class(const std::string& outcome) {
  for (auto& [word, change] : kChanges)
    if (outcome.rfind(word, 0) == 0) {
      auto f = failure_class(outcome.substr(word.size()));
      if (f) f->key = std::string(word) + f->key;
      return f;
    }
  return failure_class(outcome);
}

std::optional<FailureClass> FindingBook::failure_of(const Sighting& s) const { return sighting_class(s.outcome); }

bool FindingBook::pending(const std::string& failure) const {
  return std::any_of(st_.findings.begin(), st_.findings.end(),
                     [&](const Finding& f) { return f.cause_status == CauseStatus::PENDING && f.failure == failure; });
}

Finding* FindingBook::by_id(const std::string& id) {
  for (auto& f : st_.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The most specific analyzed cause of this class that the case carries; else, for an outcome
// line whose class could not be analyzed, the finding keyed by that line.
Finding* FindingBook::match(const FailureClass& fc, const std::string& outcome, const Case& c) {
  Finding* best = nullptr;
  Finding* by_line = nullptr;
  for (auto& f : st_.findings) {
    if (f.failure != fc.key) continue;
    if (f.cause_status == CauseStatus::ABLATED && carries(c, f.essential) &&
        (!best || f.essential.size() > best->essential.size()))
      best = &f;
    // by line, but a compile failure seen at another stage (walked since: inductor -> eager) is the same
    if ((f.cause_status == CauseStatus::NOT_RUN || f.cause_status == CauseStatus::NONE) && same_failure(f.signature, outcome))
      by_line = &f;
  }
  return best ? best : by_line;
}

void FindingBook::count(Finding& f, const Sighting& s, const std::optional<FailureClass>& fc) {
  if (f.first_case != s.key) {  // the same key: the re-run of an adopted finding's case
    ++f.count;
    f.last_seen = utc_now();
  }
  f.cuda_poisoned |= s.cuda_poisoned;
  if (fc)
    for (auto& [name, ratio] : failing_outputs(*fc, f.change == Change::FIXED ? s.baseline_report : s.report))
      ++f.outputs[name];
}

void FindingBook::write_dir(const Finding& f, const Sighting& s) {
  // Built aside and renamed into place: a finding directory is whole or absent.
  const fs::path final_dir = dir_ / "findings" / f.id;
  const fs::path tmp = dir_ / "findings" / (".tmp-" + f.id);
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  write_atomic(tmp / "case.json", to_json(from_json(s.case_json), 2) + "\n");
  write_atomic(tmp / "report.json", s.report.dump(2) + "\n");
  if (!s.baseline_report.is_null()) write_atomic(tmp / "baseline_report.json", s.baseline_report.dump(2) + "\n");
  if (!s.worker_log.empty()) write_atomic(tmp / "worker.log", s.worker_log);
  if (!s.stacks.empty()) write_atomic(tmp / "stacks.txt", s.stacks);  // a timeout's stacks
  write_finding_json_to(tmp, f);
  fs::remove_all(final_dir);  // an orphan the state never named would be adopted at start; this is a leftover
  fs::rename(tmp, final_dir);
  sync_dir(dir_ / "findings");
}

Finding& FindingBook::create(const Sighting& s, const std::optional<FailureClass>& fc, double at_s) {
  Finding n;
  n.signature = s.outcome;
  n.first_case = s.key;
  n.first_seen = n.last_seen = utc_now();
  n.first_seen_s = at_s;
  n.count = 1;
  n.detail = s.detail;
  n.cuda_poisoned = s.cuda_poisoned;
  n.lane = s.lane;
  n.change = s.change;
  n.baseline_outcome = s.baseline_outcome;
  if (fc) {
    n.failure = fc->key;
    n.cause_status = CauseStatus::PENDING;
    const nlohmann::json& side = s.change == Change::FIXED ? s.baseline_report : s.report;
    n.worst_ratio = worst_ratio(*fc, side);
    for (auto& [name, ratio] : failing_outputs(*fc, side)) ++n.outputs[name];
    // Tentative: renamed after its cause once analyzed.
    n.id = finding_id("pending " + fc->key + " " + s.key);
  } else {
    n.id = finding_id(s.outcome);
  }
  write_dir(n, s);
  st_.findings.push_back(n);
  Finding& f = st_.findings.back();
  if (!fc) mark_known(f);
  if (!st_.first_finding_s || at_s < *st_.first_finding_s) st_.first_finding_s = at_s;
  return f;
}

std::optional<AnalysisRequest> FindingBook::request_for(const Finding& f, const Sighting& s) const {
  auto fc = sighting_class(f.signature);
  if (!fc || f.cause_status != CauseStatus::PENDING) return std::nullopt;
  return AnalysisRequest{f.id, *fc, from_json(s.case_json), f.work_lane(), f.worst_ratio, Difference{f.change}, f.lane};
}

FindingBook::Filed FindingBook::file(const Sighting& s, double at_s) {
  const auto fc = failure_of(s);
  Finding* f = nullptr;
  if (fc) {
    f = match(*fc, s.outcome, from_json(s.case_json));
  } else {
    for (auto& x : st_.findings)
      if (x.cause_status == CauseStatus::NONE && x.signature == s.outcome) f = &x;
  }
  if (f) {
    count(*f, s, fc);
    return {f, false, std::nullopt};
  }
  if (fc && pending(fc->key)) {  // its class is being analyzed: which cause it has is not known yet
    if (parked_.size() < kMaxParked) parked_.push_back(s);
    return {};
  }
  Finding& n = create(s, fc, at_s);
  return {&n, true, request_for(n, s)};
}

void FindingBook::rename(Finding& f, const std::string& id) {
  if (id == f.id || by_id(id)) return;
  std::error_code ec;
  const fs::path from = dir_ / "findings" / f.id, to = dir_ / "findings" / id;
  if (fs::exists(to, ec)) fs::remove_all(to, ec);  // a leftover of a killed run: the state never named it
  fs::rename(from, to, ec);
  if (ec) return;  // keep the tentative id: the directory is where the state says
  f.id = id;
  sync_dir(dir_ / "findings");
}

void FindingBook::mark_known(Finding& f) {
  if (known_.empty()) return;
  const nlohmann::json rep = nlohmann::json::parse(read_text(dir_ / "findings" / f.id / "report.json"), nullptr, false);
  const std::string sv = rep.is_object() ? rep.value("subject_version", "") : "";
  const std::string torch = st_.environment.is_object() ? st_.environment.value("torch", "") : "";
  if (const KnownEntry* e = match_known(known_, f, torch, cuda_, sv)) f.known = e->source;
}

std::vector<AnalysisRequest> FindingBook::resolve(const std::string& id, const AnalyzeResult& r, double at_s) {
  Finding* f = by_id(id);
  if (!f || f->cause_status != CauseStatus::PENDING) return {};
  f->ablation_runs += r.runs;
  f->tested = r.tested;
  f->essential = r.essential;
  f->cause_note = r.note;
  f->confirm = r.confirm;
  const std::string failure = f->failure;
  auto same = [&](const Finding& g) {
    if (&g == f) return false;
    return r.status == CauseStatus::ABLATED
               ? g.cause_status == CauseStatus::ABLATED && g.cause == r.cause
               : (g.cause_status == CauseStatus::NOT_RUN || g.cause_status == CauseStatus::NONE) &&
                     same_failure(g.signature, f->signature);
  };
  f->cause_status = r.status == CauseStatus::ABLATED ? CauseStatus::ABLATED : CauseStatus::NOT_RUN;
  if (f->cause_status == CauseStatus::ABLATED) f->cause = r.cause;
  std::string target_id = f->id;
  auto other = std::find_if(st_.findings.begin(), st_.findings.end(), same);
  if (other != st_.findings.end()) {  // a cause already found from another case: one finding
    other->count += f->count;
    for (auto& [o, n] : f->outputs) other->outputs[o] += n;
    other->last_seen = f->last_seen;
    other->cuda_poisoned |= f->cuda_poisoned;
    other->ablation_runs += f->ablation_runs;
    target_id = other->id;
    std::error_code ec;
    fs::remove_all(dir_ / "findings" / f->id, ec);
    st_.findings.erase(st_.findings.begin() + (f - st_.findings.data()));
  } else {
    rename(*f, finding_id(f->cause_status == CauseStatus::ABLATED ? f->cause : f->signature));
    target_id = f->id;
    mark_known(*f);
  }
  // A cause found from a case where the bug showed only under more features (a precision bug
  // that fp16's tighter bound shows and bf16's hides: [dtype=fp16,label_smoothing]) is the same
  // bug as this more general one: one finding, under the general cause.
  if (Finding* t = by_id(target_id); t && t->cause_status == CauseStatus::ABLATED) {
    const std::vector<std::string> general = t->essential;
    for (size_t i = 0; i < st_.findings.size();) {
      Finding& g = st_.findings[i];
      const bool narrower = &g != t && g.cause_status == CauseStatus::ABLATED && g.failure == t->failure &&
                            g.essential.size() > general.size() &&
                            std::all_of(general.begin(), general.end(), [&](const std::string& e) {
                              return std::find(g.essential.begin(), g.essential.end(), e) != g.essential.end();
                            });
      if (!narrower) {
        ++i;
        continue;
      }
      t->count += g.count;
      for (auto& [o, n] : g.outputs) t->outputs[o] += n;
      t->ablation_runs += g.ablation_runs;
      t->cause_note += (t->cause_note.empty() ? "" : "; ") + fmt::format("merged the narrower {}", g.cause);
      std::error_code ec;
      fs::remove_all(dir_ / "findings" / g.id, ec);
      const std::string keep = t->id;
      st_.findings.erase(st_.findings.begin() + static_cast<std::ptrdiff_t>(i));
      t = by_id(keep);  // the vector moved
      i = 0;
    }
  }
  if (Finding* t = by_id(target_id)) write_finding_json_to(dir_ / "findings" / t->id, *t);
  resolved_[id] = target_id;
  // The sightings that waited for this class: filed again, now that a cause is known.
  std::vector<Sighting> waiting;
  std::vector<Sighting> rest;
  for (auto& s : parked_) {
    auto fc = failure_of(s);
    (fc && fc->key == failure ? waiting : rest).push_back(std::move(s));
  }
  parked_ = std::move(rest);
  std::vector<AnalysisRequest> next;
  for (auto& s : waiting)
    if (auto filed = file(s, at_s); filed.analyze) next.push_back(*filed.analyze);
  return next;
}

bool FindingBook::resolved_known(const std::string& id) const {
  const auto r = resolved_.find(id);
  if (r == resolved_.end()) return false;
  for (auto& f : st_.findings)
    if (f.id == r->second) return !f.known.empty();
  return false;
}

void FindingBook::close(const std::string& why, double at_s) {
  for (size_t i = 0; i < st_.findings.size(); ++i)
    if (st_.findings[i].cause_status == CauseStatus::PENDING) {
      AnalyzeResult r;
      r.status = CauseStatus::NOT_RUN;
      r.note = why;
      const std::string id = st_.findings[i].id;
      resolve(id, r, at_s);  // parked sightings of its class are filed by their outcome line now
      i = static_cast<size_t>(-1);  // the vector may have changed: start over
    }
  // What is still parked had a class whose analysis was pending: keyed by outcome line, unanalyzed.
  std::vector<Sighting> left = std::move(parked_);
  parked_.clear();
  for (auto& s : left) {
    auto fc = failure_of(s);
    Finding* f = nullptr;
    for (auto& x : st_.findings)
      if ((x.cause_status == CauseStatus::NOT_RUN || x.cause_status == CauseStatus::NONE) && same_failure(x.signature, s.outcome))
        f = &x;
    if (f) {
      count(*f, s, fc);
      continue;
    }
    Finding& n = create(s, fc, at_s);
    n.cause_status = CauseStatus::NOT_RUN;
    n.cause_note = why;
    rename(n, finding_id(n.signature));
    mark_known(n);
    write_finding_json_to(dir_ / "findings" / n.id, n);
  }
}

std::vector<AnalysisRequest> FindingBook::pending_requests() {
  std::vector<AnalysisRequest> out;
  for (auto& f : st_.findings) {
    if (f.cause_status != CauseStatus::PENDING) continue;
    auto fc = sighting_class(f.signature);
    try {
      const Case c = from_json(read_text(dir_ / "findings" / f.id / "case.json"));
      if (fc) out.push_back({f.id, *fc, c, f.work_lane(), f.worst_ratio, Difference{f.change}, f.lane});
    } catch (const std::exception&) {
      f.cause_status = CauseStatus::NOT_RUN;
      f.cause_note = "case.json unreadable on resume";
    }
  }
  return out;
}

}  // namespace flce
