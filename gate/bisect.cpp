// Library code for `flce bisect`: the stepping, one commit's run, the report.
#include "gate/bisect.hpp"

#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <memory>

#include "judge/differential.hpp"
#include "judge/signature.hpp"
#include "oracles/subject_tree.hpp"
#include "oracles/subject_worker.hpp"
#include "report/markdown.hpp"

namespace flce {

std::string_view name(BisectMark m) {
  switch (m) {
    case BisectMark::GOOD: return "good";
    case BisectMark::BAD: return "bad";
    case BisectMark::SKIP: return "skip";
  }
  return "?";
}

std::string_view name(BisectStatus s) {
  switch (s) {
    case BisectStatus::FOUND: return "found";
    case BisectStatus::NOT_FOUND: return "not-found";
    case BisectStatus::AMBIGUOUS: return "ambiguous";
  }
  return "?";
}

// ---------------------------------------------------------------- stepping

Bisection::Bisection(size_t n) : hi_(static_cast<long>(n) - 1), marks_(n) {
  if (n == 0) throw std::invalid_argument("Bisection: no candidates (the bad end is the last one)");
  marks_.back() = BisectMark::BAD;
}

std::optional<size_t> Bisection::next() const {
  const double mid = (static_cast<double>(lo_) + static_cast<double>(hi_)) / 2;
  std::optional<size_t> best;
  double best_d = 0;
  for (long i = lo_ + 1; i < hi_; ++i) {
    if (marks_[static_cast<size_t>(i)]) continue;
    const double d = std::fabs(static_cast<double>(i) - mid);
    if (!best || d < best_d) best = static_cast<size_t>(i), best_d = d;
  }
  return best;
}

void Bisection::mark(size_t i, BisectMark m) {
  if (i >= marks_.size()) throw std::out_of_range("Bisection::mark: no such candidate");
  marks_[i] = m;
  const long li = static_cast<long>(i);
  if (m == BisectMark::GOOD && li > lo_ && li < hi_) lo_ = li;
  if (m == BisectMark::BAD && li < hi_ && li > lo_) hi_ = li;
}

std::vector<size_t> Bisection::suspects() const {
  std::vector<size_t> v;
  for (long i = lo_ + 1; i < hi_; ++i)
    if (marks_[static_cast<size_t>(i)] == BisectMark::SKIP) v.push_back(static_cast<size_t>(i));
  v.push_back(static_cast<size_t>(hi_));
  return v;
}

BisectMark bisect_mark(const std::string& outcome, const std::string& bad_outcome) {
  if (outcome.empty() || is_unsupported_outcome(outcome)) return BisectMark::SKIP;  // judge/signature.hpp
  if (outcome_matches(bad_outcome, outcome)) return BisectMark::BAD;  // or one of its alternatives
  return BisectMark::GOOD;
}

std::vector<const BisectStep*> BisectReport::skipped() const {
  std::vector<const BisectStep*> v;
  for (auto& s : steps)
    if (s.mark == BisectMark::SKIP) v.push_back(&s);
  return v;
}

// ---------------------------------------------------------------- one commit

namespace {

std::string short_id(const std::string& c) { return c.substr(0, 12); }

// A plug-in that raises while being loaded for the run (not while describing it) is an
// import problem of that commit, not a finding.
bool import_failure(const RunReport& r) {
  for (auto& o : r.oracles)
    if (o.status == SubjectStatus::ERROR && o.phase == "setup" && o.signature)
      for (const char* t : {"ModuleNotFoundError", "ImportError", "SyntaxError"})
        if (o.signature->title.find(t) != std::string::npos || o.signature->matched.find(t) != std::string::npos)
          return true;
  return false;
}

}  // namespace

BisectEvaluator subject_evaluator(const BisectOptions& opt) {
  return [opt](const std::string& commit) {
    BisectStep st;
    st.commit = commit;
    SubjectTree tree;
    try {
      tree = export_subject_tree(opt.repo, commit, opt.subject_path, opt.cache);
    } catch (const SubjectTreeError& e) {
      st.why = std::string("export failed: ") + e.what();
      return st;
    }
    WorkerOptions wo;
    wo.python = opt.python;
    wo.timeout_s = opt.timeout_s;
    wo.label = "bisect-" + short_id(commit);
    std::unique_ptr<SubjectWorker> worker;
    try {
      worker = std::make_unique<SubjectWorker>(wo);
    } catch (const std::exception& e) {  // the interpreter itself, not this commit
      throw BisectInputError(fmt::format("the subject host cannot start: {}", e.what()));
    }
    SubjectInfo info = worker->describe(opt.subject, tree.subject_path);
    if (!info.error.empty()) {
      st.why = "cannot import: " + info.error;
      return st;
    }
    st.subject_version = info.version;
    if (opt.c.is_op() ? !info.op : !info.flce) {
      st.why = fmt::format("subject '{}' has no {}() there", opt.subject, opt.c.is_op() ? "op" : "flce");
      return st;
    }
    RunOptions ro;
    ro.subject = opt.subject;
    ro.subject_path = tree.subject_path;
    ro.runner = worker.get();
    ro.eager = opt.eager;
    ro.compiled = opt.compiled;
    ro.ladder = opt.ladder;
    RunReport rep = run_case(opt.c, ro);
    st.outcome = rep.outcome;
    if (import_failure(rep)) st.why = "cannot import: " + st.outcome;
    return st;
  };
}

// ---------------------------------------------------------------- the run

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) nl = s.size();
    if (nl > at) v.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return v;
}

// The rest of the good end's note once the first bad commit is known: what the bad outcome
// turned from, read off the commit before it in the order (tested: it bounds the answer).
std::string found_note(const BisectReport& r) {
  const std::string done = "the commit found is where that failure turned into the bad one";
  if (r.last_good == r.good_commit) return "; " + done;
  const std::string before = fmt::format("the commit before it in the order, {},", short_id(r.last_good));
  if (r.last_good_outcome == r.good_outcome) return fmt::format("; {} still shows it: {}", before, done);
  if (r.last_good_outcome == "pass")
    return fmt::format("; but {} passes: the commit found is where a passing case broke", before);
  return fmt::format("; {} shows {}: the commit found is where that turned into the bad one", before, r.last_good_outcome);
}

}  // namespace

BisectReport run_bisect(const BisectOptions& opt, BisectEvaluator evaluate) {
  const auto t0 = std::chrono::steady_clock::now();
  BisectReport rep;
  rep.opt = opt;
  if (!evaluate) evaluate = subject_evaluator(opt);
  auto finish = [&](BisectStatus s, std::string msg) {
    rep.status = s;
    rep.message = std::move(msg);
    rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  };
  try {
    rep.good_commit = resolve_commit(opt.repo, opt.good);
    rep.bad_commit = resolve_commit(opt.repo, opt.bad);
  } catch (const SubjectTreeError& e) {
    throw BisectInputError(e.what());
  }
  if (rep.good_commit == rep.bad_commit)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--good {} and --bad {} are the same commit {}: nothing to bisect",
                                                       opt.good, opt.bad, short_id(rep.good_commit)));
  CommandResult anc = git(opt.repo, {"merge-base", "--is-ancestor", rep.good_commit, rep.bad_commit});
  if (anc.status == 1)
    throw BisectInputError(fmt::format("{}: --good {} ({}) is not an ancestor of --bad {} ({})", opt.repo, opt.good,
                                       short_id(rep.good_commit), opt.bad, short_id(rep.bad_commit)));
  if (!anc.ok()) throw BisectInputError(fmt::format("{}: git merge-base --is-ancestor failed: {}", opt.repo, anc.err));
  // A --subject-path in neither end's tree is a typo, not a range of commits to skip.
  if (!opt.subject_path.empty()) {
    auto has = [&](const std::string& commit) {
      return git(opt.repo, {"cat-file", "-e", commit + ":" + opt.subject_path}).ok();
    };
    if (!has(rep.good_commit) && !has(rep.bad_commit))
      throw BisectInputError(fmt::format("--subject-path {}: no such directory in --good {} ({}) nor --bad {} ({})",
                                         opt.subject_path, opt.good, short_id(rep.good_commit), opt.bad,
                                         short_id(rep.bad_commit)));
  }
  CommandResult rl = git(opt.repo, {"rev-list", "--ancestry-path", "--topo-order", "--reverse",
                                    rep.good_commit + ".." + rep.bad_commit});
  if (!rl.ok()) throw BisectInputError(fmt::format("{}: git rev-list failed: {}", opt.repo, rl.err));
  rep.range = lines_of(rl.out);
  if (rep.range.empty() || rep.range.back() != rep.bad_commit)
    throw BisectInputError(fmt::format("{}: git rev-list --ancestry-path {}..{} does not end at --bad", opt.repo,
                                       opt.good, opt.bad));

  auto test = [&](const std::string& commit, const std::string& role) -> BisectStep& {
    const auto s0 = std::chrono::steady_clock::now();
    BisectStep st = evaluate(commit);
    st.commit = commit;
    st.role = role;
    st.subject_line = commit_subject(opt.repo, commit);
    st.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    st.mark = st.why.empty() ? bisect_mark(st.outcome, rep.bad_outcome) : BisectMark::SKIP;
    rep.steps.push_back(st);
    return rep.steps.back();
  };
  // After the step's mark is final (the bad end's is only known once its outcome is the bad one).
  auto say = [&](const BisectStep& st) {
    if (opt.progress)
      opt.progress(fmt::format("{} {} {}: {} -> {}{} ({:.1f} s)", st.role, short_id(st.commit), st.subject_line,
                               st.outcome.empty() ? "-" : st.outcome, name(st.mark),
                               st.why.empty() ? "" : " (" + st.why + ")", st.wall_s));
  };

  // The ends first: bad must show the bad outcome, good must not (and, with --expect-good,
  // must show that).
  rep.bad_outcome = opt.expect;
  rep.bad_outcome_from = opt.expect.empty() ? "the outcome at --bad" : "--expect";
  BisectStep& bad = test(rep.bad_commit, "bad end");
  if (opt.expect.empty() && bad.mark != BisectMark::SKIP && bad.outcome != "pass") {
    rep.bad_outcome = bad.outcome;
    bad.mark = BisectMark::BAD;
  }
  say(bad);
  if (bad.mark == BisectMark::SKIP)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--bad {} ({}) cannot run the case: {}", opt.bad,
                                                       short_id(rep.bad_commit), bad.why.empty() ? bad.outcome : bad.why));
  if (opt.expect.empty() && bad.mark != BisectMark::BAD)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--bad {} ({}) passes the case: nothing to bisect (give --expect "
                                                       "OUTCOME for the outcome to look for)",
                                                       opt.bad, short_id(rep.bad_commit)));
  if (bad.mark != BisectMark::BAD)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--bad {} ({}) shows {}, not the expected {}", opt.bad,
                                                       short_id(rep.bad_commit), bad.outcome, opt.expect));
  BisectStep& good = test(rep.good_commit, "good end");
  say(good);
  rep.good_outcome = good.outcome;
  if (good.mark == BisectMark::BAD)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--good {} ({}) already shows {}: the bad outcome is older",
                                                       opt.good, short_id(rep.good_commit), rep.bad_outcome));
  if (good.mark == BisectMark::SKIP)
    return finish(BisectStatus::NOT_FOUND, fmt::format("--good {} ({}) cannot run the case: {}", opt.good,
                                                       short_id(rep.good_commit), good.why.empty() ? good.outcome : good.why));
  if (!opt.expect_good.empty() && !outcome_matches(opt.expect_good, good.outcome))
    return finish(BisectStatus::NOT_FOUND,
                  fmt::format("--good {} ({}) shows {}, not {} (--expect-good): not bisected, as the commit found would "
                              "be where {} turned into {}; give a --good that shows {}",
                              opt.good, short_id(rep.good_commit), good.outcome, opt.expect_good, good.outcome,
                              rep.bad_outcome, opt.expect_good));
  // A good end that fails another way: the answer is where that failure became the bad one.
  const bool good_fails = good.outcome != "pass" && !outcome_matches(rep.bad_outcome, "pass");
  if (good_fails)
    rep.note = fmt::format("the good end {} ({}) does not pass: {}", opt.good, short_id(rep.good_commit),
                           good.outcome);

  Bisection b(rep.range.size());
  while (auto i = b.next()) b.mark(*i, test(rep.range[*i], "step").mark);
  if (b.found()) {
    rep.first_bad = rep.range[b.first_bad()];
    rep.first_bad_subject = commit_subject(opt.repo, rep.first_bad);
    const long lg = b.last_good();
    rep.last_good = lg < 0 ? rep.good_commit : rep.range[static_cast<size_t>(lg)];
    for (auto& s : rep.steps)
      if (s.commit == rep.last_good) rep.last_good_outcome = s.outcome;
    if (good_fails) rep.note += found_note(rep);
    return finish(BisectStatus::FOUND, "");
  }
  if (good_fails) rep.note += "; the suspects are where some failure, not necessarily a pass, turned into the bad one";
  for (size_t i : b.suspects()) rep.suspects.push_back({rep.range[i], commit_subject(opt.repo, rep.range[i])});
  return finish(BisectStatus::AMBIGUOUS,
                fmt::format("skipped commits are in the way: the first bad commit is one of {} (the last good one "
                            "tested is {})",
                            rep.suspects.size(),
                            b.last_good() < 0 ? short_id(rep.good_commit) + " (--good)"
                                              : short_id(rep.range[static_cast<size_t>(b.last_good())])));
}

// ---------------------------------------------------------------- reports

nlohmann::ordered_json bisect_json(const BisectReport& r) {
  using J = nlohmann::ordered_json;
  J j;
  j["status"] = name(r.status);
  j["message"] = r.message;
  j["repo"] = r.opt.repo;
  j["good"] = {{"ref", r.opt.good}, {"commit", r.good_commit}};
  j["bad"] = {{"ref", r.opt.bad}, {"commit", r.bad_commit}};
  j["case"] = r.opt.case_file;
  j["subject"] = r.opt.subject;
  j["subject_path"] = r.opt.subject_path;
  j["bad_outcome"] = r.bad_outcome;
  j["bad_outcome_from"] = r.bad_outcome_from;
  j["expect_good"] = r.opt.expect_good;
  j["good_outcome"] = r.good_outcome;
  j["note"] = r.note;
  j["order"] = "git rev-list --ancestry-path --topo-order --reverse GOOD..BAD";
  j["candidates"] = r.range.size();
  j["first_bad"] = r.status == BisectStatus::FOUND ? J{{"commit", r.first_bad}, {"subject", r.first_bad_subject}} : J();
  j["last_good"] = r.status == BisectStatus::FOUND ? J{{"commit", r.last_good}, {"outcome", r.last_good_outcome}} : J();
  auto sus = J::array();
  for (auto& [c, s] : r.suspects) sus.push_back({{"commit", c}, {"subject", s}});
  j["suspects"] = sus;
  auto skipped = J::array();
  for (auto* s : r.skipped())
    skipped.push_back({{"commit", s->commit}, {"subject", s->subject_line}, {"outcome", s->outcome}, {"why", s->why}});
  j["skipped"] = skipped;
  auto steps = J::array();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    auto& s = r.steps[i];
    steps.push_back({{"n", i + 1}, {"role", s.role}, {"commit", s.commit}, {"subject", s.subject_line},
                     {"outcome", s.outcome}, {"verdict", name(s.mark)}, {"why", s.why},
                     {"subject_version", s.subject_version}, {"wall_s", s.wall_s}});
  }
  j["steps"] = steps;
  j["wall_s"] = r.wall_s;
  return j;
}

Report bisect_report(const BisectReport& r) {
  Markdown md;
  switch (r.status) {
    case BisectStatus::FOUND:
      md.heading(2, fmt::format("flce bisect: first bad commit {} {}", md_code(short_id(r.first_bad)), r.first_bad_subject));
      break;
    case BisectStatus::AMBIGUOUS:
      md.heading(2, fmt::format("flce bisect: ambiguous, the first bad commit is one of {}", r.suspects.size()));
      break;
    case BisectStatus::NOT_FOUND: md.heading(2, "flce bisect: not found"); break;
  }
  md.paragraph(fmt::format("Case {} with subject {} in {}: --good {} ({}) → --bad {} ({}), {} commit{} on the ancestry "
                           "path, {} run{}, {} skipped, {:.0f} s.",
                           md_code(r.opt.case_file), md_code(r.opt.subject), md_code(r.opt.repo), md_code(r.opt.good),
                           r.good_commit.empty() ? "?" : md_code(short_id(r.good_commit)), md_code(r.opt.bad),
                           r.bad_commit.empty() ? "?" : md_code(short_id(r.bad_commit)), r.range.size(),
                           r.range.size() == 1 ? "" : "s", r.steps.size(), r.steps.size() == 1 ? "" : "s",
                           r.skipped().size(), r.wall_s));
  if (!r.bad_outcome.empty())
    md.paragraph(fmt::format("Bad outcome: {} ({}).", md_code(r.bad_outcome), r.bad_outcome_from));
  if (r.status == BisectStatus::FOUND)
    md.paragraph(fmt::format("First bad commit: {} {}", md_code(r.first_bad), r.first_bad_subject));
  if (!r.note.empty()) md.paragraph("**Note:** " + r.note + ".");
  if (!r.message.empty()) md.paragraph(r.message);
  if (!r.suspects.empty()) {
    Table t{{"possible first bad commit", "subject"}, {}};
    for (auto& [c, s] : r.suspects) t.row({md_code(c), s});
    md.add(t);
  }
  if (!r.steps.empty()) {
    md.heading(3, "Steps");
    Table t{{"#", "role", "commit", "subject", "outcome", "verdict"}, {}};
    for (size_t i = 0; i < r.steps.size(); ++i) {
      auto& s = r.steps[i];
      t.row({std::to_string(i + 1), s.role, md_code(short_id(s.commit)), s.subject_line,
             s.outcome.empty() ? "-" : md_code(s.outcome), std::string(name(s.mark))});
    }
    md.add(t);
  }
  if (auto sk = r.skipped(); !sk.empty()) {
    md.heading(3, "Skipped (cannot run there)");
    List l;
    for (auto* s : sk) {
      std::string why = s->why.empty() ? s->outcome : s->why;
      if (why.size() > 200) why = why.substr(0, 200) + "…";
      l.items.push_back(fmt::format("{} {}: {}", md_code(short_id(s->commit)), s->subject_line, why));
    }
    md.add(l);
  }
  Report rep;
  rep.markdown = std::move(md);
  rep.json = bisect_json(r);
  return rep;
}

}  // namespace flce
