// flce bisect's pure parts (stepping with skips, outcome marks), its run over a real git
// repository with a fake evaluator (no Python), and the tree cache of oracles/subject_tree
// (export, reuse, the user's repository left as it was, bad input).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <cmath>
#include <map>
#include <set>

#include "gate/bisect.hpp"
#include "gate/gate.hpp"
#include "oracles/subject_tree.hpp"
#include "process/command.hpp"
#include "report/markdown.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

// Drives a Bisection with "first bad = index `first`", `skip` the untestable indices.
struct Drive {
  std::vector<size_t> tested;
  Bisection b;
  Drive(size_t n, size_t first, std::set<size_t> skip = {}) : b(n) {
    while (auto i = b.next()) {
      tested.push_back(*i);
      b.mark(*i, skip.count(*i) ? BisectMark::SKIP : *i >= first ? BisectMark::BAD : BisectMark::GOOD);
    }
  }
};

TEST(Bisection, FindsEveryFirstBadIndex) {
  for (size_t n : {1u, 2u, 3u, 7u, 11u, 64u})
    for (size_t first = 0; first < n; ++first) {
      Drive d(n, first);
      ASSERT_TRUE(d.b.found()) << n << " " << first;
      EXPECT_EQ(d.b.first_bad(), first) << n;
      EXPECT_LE(d.tested.size(), static_cast<size_t>(std::ceil(std::log2(static_cast<double>(n) + 1)))) << n;
      EXPECT_EQ(d.b.suspects(), std::vector<size_t>{first});
    }
}

TEST(Bisection, StartsInTheMiddleAndStepsAroundASkip) {
  // 11 candidates (the bad end is index 10): the middle is 4 (lower of 4 and 5).
  Drive d(11, 6, {4});
  ASSERT_GE(d.tested.size(), 2u);
  EXPECT_EQ(d.tested[0], 4u);
  EXPECT_EQ(d.tested[1], 5u);  // the nearest untested one to the middle
  EXPECT_TRUE(d.b.found());
  EXPECT_EQ(d.b.first_bad(), 6u);
  EXPECT_EQ(d.b.marks()[4], BisectMark::SKIP);
}

TEST(Bisection, SkipsInTheWayLeaveARangeOfSuspects) {
  // First bad is 5, and 3 and 4 cannot run: the answer is one of 3, 4, 5.
  Drive d(8, 5, {3, 4});
  EXPECT_TRUE(d.b.done());
  EXPECT_FALSE(d.b.found());
  EXPECT_EQ(d.b.last_good(), 2);
  EXPECT_EQ(d.b.first_bad(), 5u);
  EXPECT_EQ(d.b.suspects(), (std::vector<size_t>{3, 4, 5}));
  // Every candidate skipped: anything up to the bad end may be first.
  Drive all(4, 2, {0, 1, 2});
  EXPECT_FALSE(all.b.found());
  EXPECT_EQ(all.b.last_good(), -1);
  EXPECT_EQ(all.b.suspects(), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(Bisection, BadEndAloneIsTheAnswer) {
  Bisection b(1);
  EXPECT_FALSE(b.next());
  EXPECT_TRUE(b.found());
  EXPECT_EQ(b.first_bad(), 0u);
  EXPECT_THROW(Bisection(0), std::invalid_argument);
}

TEST(BisectMark, OutcomeLines) {
  const std::string bad = "judge:loss:out-of-bounds@eager";
  EXPECT_EQ(bisect_mark(bad, bad), BisectMark::BAD);
  EXPECT_EQ(bisect_mark("pass", bad), BisectMark::GOOD);
  EXPECT_EQ(bisect_mark("tier2-lowering@compiled:inductor", bad), BisectMark::GOOD);  // not the bad one yet
  EXPECT_EQ(bisect_mark("unsupported", bad), BisectMark::SKIP);
  EXPECT_EQ(bisect_mark("unsupported-by-subject:softcap", bad), BisectMark::SKIP);
  EXPECT_EQ(bisect_mark("", ""), BisectMark::SKIP);  // did not run at all
}

TEST(RunCommand, CapturesOutputAndStatus) {
  CommandResult r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.line(), "out");
  EXPECT_EQ(r.err, "err\n");
  CommandResult none = run_command({"flce-no-such-program-xyz"});
  EXPECT_FALSE(none.ok());
  EXPECT_FALSE(none.err.empty());
}

// A scratch repository: commit k writes "k" into its file and is tagged c<k>.
struct Repo {
  fs::path dir, cache;
  explicit Repo(const std::string& name, int commits, bool src_layout = false) {
    dir = fs::path(::testing::TempDir()) / ("flce-bisect-" + name + "-" + std::to_string(::getpid()));
    cache = dir.string() + "-cache";
    fs::remove_all(dir);
    fs::remove_all(cache);
    fs::create_directories(dir);
    run({"init", "-q"});
    for (int k = 0; k < commits; ++k) {
      fs::path f = src_layout ? dir / "src" / "pkg" / "mod.py" : dir / "mod.py";
      fs::create_directories(f.parent_path());
      std::ofstream(f) << "VALUE = " << k << "\n";
      run({"add", "-A"});
      run({"commit", "-qm", "commit " + std::to_string(k)});
      run({"tag", "c" + std::to_string(k)});
    }
  }
  ~Repo() {
    fs::remove_all(dir);
    fs::remove_all(cache);
  }
  std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), {"-c", "user.email=ci@flce", "-c", "user.name=ci"});
    CommandResult r = git(dir.string(), args);
    EXPECT_TRUE(r.ok()) << r.err;
    return r.line();
  }
};

TEST(SubjectTree, ExportsIntoTheCacheOnceAndLeavesTheRepositoryAlone) {
  Repo repo("tree", 3, true);
  const std::string status_before = repo.run({"status", "--porcelain", "--ignored"});
  const std::string head_before = repo.run({"rev-parse", "HEAD"});
  SubjectTree t = export_subject_tree(repo.dir.string(), "c1", "", repo.cache.string());
  EXPECT_EQ(t.commit, repo.run({"rev-parse", "c1"}));
  EXPECT_EQ(t.subject_line, "commit 1");
  EXPECT_FALSE(t.reused);
  EXPECT_EQ(t.root, (repo.cache / t.commit).string());
  EXPECT_EQ(t.subject_path, t.root + "/src");  // Liger's layout
  std::ifstream in(t.subject_path + "/pkg/mod.py");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "VALUE = 1\n");
  // Reused, by commit id, whatever the ref was called.
  SubjectTree again = export_subject_tree(repo.dir.string(), t.commit, "", repo.cache.string());
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.root, t.root);
  // path= inside the tree.
  SubjectTree inner = export_subject_tree(repo.dir.string(), "c1", "src/pkg", repo.cache.string());
  EXPECT_EQ(inner.subject_path, t.root + "/src/pkg");
  // No temp directory left; the repository, its worktrees and HEAD untouched.
  for (auto& e : fs::directory_iterator(repo.cache)) EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u);
  EXPECT_EQ(repo.run({"status", "--porcelain", "--ignored"}), status_before);
  EXPECT_EQ(repo.run({"rev-parse", "HEAD"}), head_before);
  EXPECT_EQ(repo.run({"worktree", "list", "--porcelain"}).find("worktree", 1), std::string::npos);
}

TEST(SubjectTree, ConcurrentExportsOfOneCommitAgree) {
  Repo repo("race", 2);
  std::vector<std::future<SubjectTree>> f;
  for (int i = 0; i < 4; ++i)
    f.push_back(std::async(std::launch::async, [&] { return export_subject_tree(repo.dir.string(), "c1", "", repo.cache.string()); }));
  std::set<std::string> roots;
  for (auto& x : f) roots.insert(x.get().root);
  ASSERT_EQ(roots.size(), 1u);
  std::ifstream in(*roots.begin() + "/mod.py");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "VALUE = 1\n");
  for (auto& e : fs::directory_iterator(repo.cache)) EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u);
}

TEST(SubjectTree, BadInputNamesTheSpec) {
  Repo repo("bad", 1);
  auto message = [&](auto f) {
    try {
      f();
    } catch (const SubjectTreeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { export_subject_tree("/nonexistent/repo", "main", "", repo.cache.string()); })
                .find("/nonexistent/repo: no such directory"),
            std::string::npos);
  EXPECT_NE(message([&] { export_subject_tree(repo.dir.string(), "no-such-ref", "", repo.cache.string()); })
                .find("@no-such-ref: unknown ref"),
            std::string::npos);
  EXPECT_NE(message([&] { export_subject_tree(repo.dir.string(), "c0", "nope", repo.cache.string()); })
                .find("path=nope: no such directory"),
            std::string::npos);
  EXPECT_NE(message([&] { parse_git_spec("/repo-without-ref"); }).find("expected /path/to/repo@REF"), std::string::npos);
  GitSpec g = parse_git_spec("/a@b/repo@v1.2");
  EXPECT_EQ(g.repo, "/a@b/repo");
  EXPECT_EQ(g.ref, "v1.2");
}

TEST(GateSpec, MergeBaseIsTheCandidatesRepositoryAtTheMergeBase) {
  Repo repo("mb", 3);  // c0 - c1 - c2 on the default branch
  repo.run({"branch", "-f", "target", "c1"});
  repo.run({"checkout", "-q", "-b", "pr", "c1"});
  std::ofstream(repo.dir / "pr.txt") << "pr\n";
  repo.run({"add", "-A"});
  repo.run({"commit", "-qm", "the PR"});
  GateSpec cand = parse_gate_spec("subject=plug,git=" + repo.dir.string() + "@pr");
  GateSpec base = merge_base_spec(cand, "c2", "");
  EXPECT_EQ(base.git_repo, repo.dir.string());
  EXPECT_EQ(base.git_ref, repo.run({"rev-parse", "c1"}));
  EXPECT_EQ(base.subject, "plug");
  EXPECT_EQ(base.text, "subject=plug,git=" + repo.dir.string() + "@" + base.git_ref);
  GateSpec other = merge_base_spec(cand, "target", "subject=model,python=/v/bin/python");
  EXPECT_EQ(other.subject, "model");
  EXPECT_EQ(other.python, "/v/bin/python");
  EXPECT_EQ(other.git_ref, repo.run({"rev-parse", "c1"}));
  EXPECT_THROW(merge_base_spec(parse_gate_spec("subject=plug"), "main", ""), std::invalid_argument);
  EXPECT_THROW(merge_base_spec(cand, "main", "subject=plug,git=/x@y"), std::invalid_argument);
  EXPECT_THROW(merge_base_spec(cand, "no-such-branch", ""), SubjectTreeError);
}

// run_bisect over a real repository, each commit "evaluated" by reading its tree's VALUE.
TEST(RunBisect, FindsTheFirstBadCommitAroundASkip) {
  Repo repo("run", 12);  // c0 good, c11 bad; c4 cannot run, from c7 on the bad outcome
  std::map<std::string, int> value;
  for (int k = 0; k < 12; ++k) value[repo.run({"rev-parse", "c" + std::to_string(k)})] = k;
  BisectOptions o;
  o.repo = repo.dir.string();
  o.good = "c0";
  o.bad = "c11";
  o.case_file = "case.json";
  o.subject = "plug";
  int runs = 0;
  auto eval = [&](const std::string& commit) {
    ++runs;
    BisectStep s;
    const int k = value.at(commit);
    if (k == 5) s.why = "cannot import: SyntaxError";
    else s.outcome = k >= 7 ? "judge:loss:out-of-bounds@eager" : "pass";
    return s;
  };
  BisectReport r = run_bisect(o, eval);
  ASSERT_EQ(r.status, BisectStatus::FOUND) << r.message;
  EXPECT_EQ(r.first_bad, repo.run({"rev-parse", "c7"}));
  EXPECT_EQ(r.first_bad_subject, "commit 7");
  EXPECT_EQ(r.bad_outcome, "judge:loss:out-of-bounds@eager");
  EXPECT_EQ(r.range.size(), 11u);
  EXPECT_EQ(r.steps[0].role, "bad end");
  EXPECT_EQ(r.steps[1].role, "good end");
  ASSERT_EQ(r.skipped().size(), 1u);
  EXPECT_EQ(r.skipped()[0]->subject_line, "commit 5");
  EXPECT_EQ(runs, static_cast<int>(r.steps.size()));
  Report rep = bisect_report(r);
  ASSERT_TRUE(rep.json);
  EXPECT_EQ((*rep.json)["status"], "found");
  EXPECT_EQ((*rep.json)["first_bad"]["subject"], "commit 7");
  EXPECT_EQ((*rep.json)["skipped"].size(), 1u);

  // The ends are checked first.
  o.good = o.bad = "c11";
  EXPECT_EQ(run_bisect(o, eval).status, BisectStatus::NOT_FOUND);
  o.good = "c0";
  o.bad = "c3";  // passes
  BisectReport passes = run_bisect(o, eval);
  EXPECT_EQ(passes.status, BisectStatus::NOT_FOUND);
  EXPECT_NE(passes.message.find("passes the case"), std::string::npos);
  o.good = "c8";
  o.bad = "c11";  // good already bad
  EXPECT_NE(run_bisect(o, eval).message.find("already shows"), std::string::npos);
  o.good = "c2";
  o.expect = "tier2-lowering@compiled:inductor";  // not what bad shows
  EXPECT_NE(run_bisect(o, eval).message.find("not the expected"), std::string::npos);
  o.expect.clear();
  o.good = "c11";
  o.bad = "c0";
  EXPECT_THROW(run_bisect(o, eval), BisectInputError);  // good is no ancestor of bad
  o.good = "no-such-ref";
  EXPECT_THROW(run_bisect(o, eval), BisectInputError);
}

TEST(RunBisect, AmbiguousWhenSkipsAreInTheWay) {
  Repo repo("amb", 6);
  std::map<std::string, int> value;
  for (int k = 0; k < 6; ++k) value[repo.run({"rev-parse", "c" + std::to_string(k)})] = k;
  BisectOptions o;
  o.repo = repo.dir.string();
  o.good = "c0";
  o.bad = "c5";
  o.subject = "plug";
  auto eval = [&](const std::string& commit) {
    BisectStep s;
    const int k = value.at(commit);
    if (k == 2 || k == 3) s.outcome = "unsupported";
    else s.outcome = k >= 3 ? "judge:loss:out-of-bounds@eager" : "pass";
    return s;
  };
  BisectReport r = run_bisect(o, eval);
  ASSERT_EQ(r.status, BisectStatus::AMBIGUOUS);
  ASSERT_EQ(r.suspects.size(), 3u);  // c2, c3 skipped, c4 bad
  EXPECT_EQ(r.suspects[0].second, "commit 2");
  EXPECT_EQ(r.suspects[2].second, "commit 4");
  EXPECT_NE(r.message.find("one of 3"), std::string::npos);
}

// A good end that fails another way (Liger v0.8.1: grad_weight missing, main: out of bounds):
// the bisection still runs, and says what the commit found is; --expect-good refuses it.
struct Ladder {
  Repo repo{"note", 8};
  std::map<std::string, int> value;
  BisectOptions o;
  int runs = 0;
  std::vector<std::string> progress;
  Ladder() {
    for (int k = 0; k < 8; ++k) value[repo.run({"rev-parse", "c" + std::to_string(k)})] = k;
    o.repo = repo.dir.string();
    o.good = "c0";
    o.bad = "c7";
    o.subject = "plug";
    o.progress = [this](const std::string& line) { progress.push_back(line); };
  }
  // outcome_of(k): the outcome commit ck shows.
  BisectReport run(std::function<std::string(int)> outcome_of) {
    runs = 0;
    progress.clear();
    return run_bisect(o, [&, outcome_of](const std::string& commit) {
      ++runs;
      BisectStep s;
      s.outcome = outcome_of(value.at(commit));
      return s;
    });
  }
  std::string id(int k) { return repo.run({"rev-parse", "--short=12", "c" + std::to_string(k)}); }
};

const std::string kMissing = "judge:grad_weight:missing@eager", kOob = "judge:grad_weight:out-of-bounds@eager";

TEST(RunBisect, AGoodEndThatFailsAnotherWayIsNoted) {
  Ladder l;
  // c0-c4 miss grad_weight, c5 on get it out of bounds: c5 is where one failure became the other.
  BisectReport r = l.run([](int k) { return k < 5 ? kMissing : kOob; });
  ASSERT_EQ(r.status, BisectStatus::FOUND) << r.message;
  EXPECT_EQ(r.first_bad_subject, "commit 5");
  EXPECT_EQ(r.good_outcome, kMissing);
  EXPECT_EQ(r.last_good_outcome, kMissing);
  EXPECT_EQ(r.note, "the good end c0 (" + l.id(0) + ") does not pass: " + kMissing + "; the commit before it in the order, " +
                        l.id(4) + ", still shows it: the commit found is where that failure turned into the bad one");
  const Report rep = bisect_report(r);
  EXPECT_EQ((*rep.json)["note"], r.note);
  EXPECT_EQ((*rep.json)["good_outcome"], kMissing);
  EXPECT_EQ((*rep.json)["last_good"]["outcome"], kMissing);
  EXPECT_NE(render_markdown(rep.markdown).find("**Note:** the good end c0 (" + l.id(0) + ") does not pass: "),
            std::string::npos);
  // The bad end's progress line says bad (its mark is known once its outcome is the bad one).
  ASSERT_GE(l.progress.size(), 2u);
  EXPECT_NE(l.progress[0].find("bad end " + l.id(7)), std::string::npos) << l.progress[0];
  EXPECT_NE(l.progress[0].find("-> bad"), std::string::npos) << l.progress[0];

  // The case passed in between: the commit found is where a passing case broke.
  r = l.run([](int k) { return k == 0 ? kMissing : k < 5 ? "pass" : kOob; });
  ASSERT_EQ(r.status, BisectStatus::FOUND);
  EXPECT_NE(r.note.find("; but the commit before it in the order, " + l.id(4) +
                        ", passes: the commit found is where a passing case broke"),
            std::string::npos) << r.note;
  // A third outcome in between.
  r = l.run([](int k) { return k < 3 ? kMissing : k < 5 ? "tier2-lowering@compiled:inductor" : kOob; });
  EXPECT_NE(r.note.find(", shows tier2-lowering@compiled:inductor: the commit found is where that turned into the bad one"),
            std::string::npos) << r.note;
  // The first candidate is the answer: its predecessor is the good end itself.
  r = l.run([](int k) { return k < 1 ? kMissing : kOob; });
  EXPECT_EQ(r.first_bad_subject, "commit 1");
  EXPECT_EQ(r.note, "the good end c0 (" + l.id(0) + ") does not pass: " + kMissing +
                        "; the commit found is where that failure turned into the bad one");
  // No note when the good end passes, nor when bisecting for a fix (the bad outcome is pass).
  EXPECT_EQ(l.run([](int k) { return k < 5 ? "pass" : kOob; }).note, "");
  l.o.expect = "pass";
  r = l.run([](int k) { return k < 5 ? kMissing : "pass"; });
  ASSERT_EQ(r.status, BisectStatus::FOUND) << r.message;
  EXPECT_EQ(r.note, "");
}

TEST(RunBisect, ExpectGoodRefusesAGoodEndThatDoesNotShowIt) {
  Ladder l;
  l.o.expect_good = "pass";
  BisectReport r = l.run([](int k) { return k < 5 ? kMissing : kOob; });
  EXPECT_EQ(r.status, BisectStatus::NOT_FOUND);
  EXPECT_EQ(l.runs, 2);  // the two ends, nothing between them
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.message, "--good c0 (" + l.id(0) + ") shows " + kMissing + ", not pass (--expect-good): not bisected, as the "
                       "commit found would be where " + kMissing + " turned into " + kOob + "; give a --good that shows pass");
  EXPECT_EQ((*bisect_report(r).json)["expect_good"], "pass");
  // A good end that shows it (or one of its alternatives) is bisected as usual.
  EXPECT_EQ(l.run([](int k) { return k < 5 ? "pass" : kOob; }).status, BisectStatus::FOUND);
  l.o.expect_good = "pass | " + kMissing;
  r = l.run([](int k) { return k < 5 ? kMissing : kOob; });
  EXPECT_EQ(r.status, BisectStatus::FOUND);
  EXPECT_NE(r.note.find("does not pass"), std::string::npos);  // allowed, still said
}

}  // namespace
}  // namespace flce
