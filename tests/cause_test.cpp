// Findings as bugs (findings/cause.hpp, analyze.hpp, known.hpp; campaign/finding_book.hpp):
// failure classes off outcome lines, the ablation's features, the analysis against a fake
// subject whose bugs are written down here, known lists, and how sightings become findings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <set>

#include "fuzz/campaign/finding_book.hpp"
#include "fuzz/findings/analyze.hpp"
#include "fuzz/findings/cause.hpp"
#include "fuzz/findings/known.hpp"
#include "judge/signature.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

// A report.json as a worker writes it, with one oracle's outputs and their findings and ratios.
nlohmann::json report_with(const std::string& oracle, const std::vector<std::tuple<std::string, std::string, double>>& outs,
                           const std::string& version = "model 1") {
  nlohmann::json o{{"oracle", oracle}, {"status", "ok"}, {"outputs", nlohmann::json::array()}};
  for (auto& [name, finding, ratio] : outs)
    o["outputs"].push_back({{"output", name}, {"finding", finding}, {"err_over_bound", ratio}});
  return {{"subject_version", version}, {"oracles", nlohmann::json::array({o})}};
}

TEST(Cause, FailureClassOfEachOutcomeKind) {
  auto n = failure_class("judge:grad_weight:out-of-bounds@eager");
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->numeric);
  EXPECT_EQ(n->key, "out-of-bounds@eager");
  auto t = failure_class("tier1-decomposition@compiled:eager");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->numeric);
  EXPECT_EQ(t->key, "tier1-decomposition@compiled");  // the ladder's stage is not part of the class
  EXPECT_EQ(failure_class("bucket-0a1b@eager:-")->key, "bucket-0a1b@eager");
  for (const char* none : {"pass", "unsupported", "unsupported-by-subject:softcap", "crash:SIGSEGV@eager",
                           "timeout@compiled:inductor", "oom@golden", "flce-error@parse", "judge:loss:bogus@eager"})
    EXPECT_FALSE(failure_class(none)) << none;
}

TEST(Cause, ShowsLooksAtEveryOutputNotOnlyTheFirst) {
  const FailureClass f = *failure_class("judge:loss:out-of-bounds@eager");
  const auto rep = report_with("eager", {{"loss", "ok", 0.3}, {"grad_weight", "out-of-bounds", 7.5}});
  EXPECT_TRUE(shows(f, "judge:grad_weight:out-of-bounds@eager", rep));
  EXPECT_EQ(failing_outputs(f, rep), (std::map<std::string, double>{{"grad_weight", 7.5}}));
  EXPECT_DOUBLE_EQ(worst_ratio(f, rep), 7.5);
  EXPECT_FALSE(shows(f, "pass", report_with("eager", {{"loss", "ok", 0.3}})));
  EXPECT_FALSE(shows(f, "x", report_with("compiled", {{"loss", "out-of-bounds", 3}})));  // another oracle
}

TEST(Cause, FeaturesNameFieldsAwayFromTheirDefault) {
  Case c;
  EXPECT_TRUE(features(c).empty());
  c.input_dtype = c.weight_dtype = DType::F32;
  c.softcap = 3.0;
  c.reduction = Reduction::NONE;
  c.token_grad = TokenGrad::LOG_SPREAD;
  c.compile.dynamic = true;
  EXPECT_EQ(features(c), (std::vector<std::string>{"dtype=fp32", "softcap", "reduction=none", "token_grad=log_spread",
                                                   "compile.dynamic=true"}));
  // An eager failure never tries compile options; a trace-time error never tries what is fed.
  std::vector<std::string> eager, traced;
  for (auto& a : ablations(c, *failure_class("judge:loss:out-of-bounds@eager"))) eager.push_back(a.feature);
  for (auto& a : ablations(c, *failure_class("tier1-decomposition@compiled:eager"))) traced.push_back(a.feature);
  EXPECT_EQ(eager, (std::vector<std::string>{"dtype=fp32", "softcap", "reduction=none", "token_grad=log_spread"}));
  EXPECT_EQ(traced, (std::vector<std::string>{"dtype=fp32", "softcap", "reduction=none", "compile.dynamic=true"}));
  // A CUDA fault is raised when a kernel runs: what is fed may be what sends it out of bounds.
  std::vector<std::string> fault;
  for (auto& a : ablations(c, *failure_class("cuda-illegal-memory-access@compiled:inductor"))) fault.push_back(a.feature);
  EXPECT_EQ(fault, (std::vector<std::string>{"dtype=fp32", "softcap", "reduction=none", "token_grad=log_spread",
                                             "compile.dynamic=true"}));
  // The contract is the subject's, never a feature of the case: no ablation judges another promise.
  Case torch = c;
  torch.semantics = Semantics::TORCH;
  torch.grad_weight_split = true;
  std::vector<std::string> judged;
  for (auto& a : ablations(torch, *failure_class("judge:grad_weight:out-of-bounds@eager"))) {
    judged.push_back(a.feature);
    EXPECT_EQ(a.reset.semantics, Semantics::TORCH) << a.feature;
    EXPECT_TRUE(a.reset.grad_weight_split) << a.feature;
  }
  EXPECT_EQ(judged, eager);
  for (auto& a : ablations(c, *failure_class("judge:loss:out-of-bounds@compiled"))) {
    EXPECT_TRUE(validation_errors(a.reset).empty()) << a.feature;
    EXPECT_NE(a.reset, c) << a.feature;
  }
}

TEST(Cause, ACaseWhoseEveryTargetIsIgnoredIsAllIgnoredWhateverItsFraction) {
  auto has = [](const Case& c, const std::string& f) {
    const auto fs = features(c);
    return std::find(fs.begin(), fs.end(), f) != fs.end();
  };
  Case c;
  c.BT = 1;
  c.ignore_fraction = 0.5;
  int all = 0, some = 0;
  for (uint64_t seed = 1; seed <= 64; ++seed) {  // BT=1 at 1/2: about half the seeds ignore the one target
    c.seed = seed;
    all += has(c, "ignore_fraction=all");
    some += has(c, "ignore_fraction=some");
  }
  EXPECT_GT(all, 8);
  EXPECT_GT(some, 8);
  EXPECT_EQ(all + some, 64);
  c.BT = 256;  // 256 rows at 1/2: never all ignored
  c.seed = 3;
  EXPECT_TRUE(has(c, "ignore_fraction=some"));
  c.ignore_fraction = 1;
  EXPECT_TRUE(has(c, "ignore_fraction=all"));
}

TEST(Cause, DependentFieldsFollowAReset) {
  Case c;
  c.ce_weight = true;
  c.regime = Regime::WEIGHT_SPREAD;  // needs class weights
  auto r = reset_feature(c, "ce_weight");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ce_weight);
  EXPECT_EQ(r->regime, Regime::NORMAL);
  EXPECT_TRUE(validation_errors(*r).empty());
  EXPECT_FALSE(reset_feature(c, "softcap"));  // it has none
}

TEST(Cause, KeysSortFeaturesAndCasesCarryThem) {
  EXPECT_EQ(cause_key("out-of-bounds@eager", {"softcap", "ce_weight"}), "out-of-bounds@eager[ce_weight,softcap]");
  EXPECT_EQ(cause_key("tier1-decomposition@compiled", {}), "tier1-decomposition@compiled[]");
  Case c;
  c.softcap = 30.0;
  EXPECT_TRUE(carries(c, {"softcap"}));
  EXPECT_FALSE(carries(c, {"softcap", "label_smoothing"}));
  EXPECT_TRUE(carries(c, {}));
}

TEST(Cause, FreshSeedsArePureAndNeverTheCasesOwn) {
  Case c;
  c.seed = 42;
  std::set<uint64_t> seen;
  for (int k = 0; k < kConfirmSeeds; ++k) {
    EXPECT_EQ(with_fresh_seed(c, k), with_fresh_seed(c, k));
    EXPECT_NE(with_fresh_seed(c, k).seed, 42u);
    seen.insert(with_fresh_seed(c, k).seed);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kConfirmSeeds));
}

// A fake subject with two planted bugs in grad_weight: under softcap, and under label smoothing
// (either one fails a case), and a marginal one: 1.1x its bound on even seeds under ce_weight.
WorkerReply fake_subject(const Case& c) {
  WorkerReply r;
  double ratio = 0.4;
  if (c.softcap || c.label_smoothing > 0) ratio = 50;
  else if (c.ce_weight) ratio = c.seed % 2 ? 0.9 : 1.1;
  r.report = report_with("eager", {{"loss", "ok", 0.2}, {"grad_weight", ratio > 1 ? "out-of-bounds" : "ok", ratio}});
  r.outcome = ratio > 1 ? "judge:grad_weight:out-of-bounds@eager" : "pass";
  return r;
}

TEST(Analyze, TwoBugsInOneCaseEndAtOneCauseNotAtNone) {
  Case c;
  c.softcap = 3.0;
  c.label_smoothing = 0.1;
  c.bias = true;
  c.requires_grad.bias = true;
  const FailureClass f = *failure_class("judge:grad_weight:out-of-bounds@eager");
  int runs = 0;
  AnalyzeResult r = analyze(c, f, 50, [&](const Case& k) { return ++runs, fake_subject(k); }, {});
  ASSERT_EQ(r.status, CauseStatus::ABLATED) << r.note;
  // bias goes first (its reset keeps the failure), softcap's reset keeps it too (smoothing still
  // fails it), then smoothing is the one left: 1-minimal.
  EXPECT_EQ(r.essential, (std::vector<std::string>{"label_smoothing"}));
  EXPECT_EQ(r.cause, "out-of-bounds@eager[label_smoothing]");
  EXPECT_EQ(r.runs, runs);
  EXPECT_EQ(r.runs, 1 + 3);  // the case alone, then one run per feature
  EXPECT_FALSE(r.confirm.ran());  // 50x is not marginal
}

TEST(Analyze, OneBugNamesItsFlag) {
  Case c;
  c.softcap = 3.0;
  c.reduction = Reduction::SUM;
  const FailureClass f = *failure_class("judge:grad_weight:out-of-bounds@eager");
  AnalyzeResult r = analyze(c, f, 50, fake_subject, {});
  EXPECT_EQ(r.cause, "out-of-bounds@eager[softcap]");
  EXPECT_EQ(r.tested, (std::vector<std::string>{"softcap", "reduction=sum"}));
}

TEST(Analyze, MarginalFindingsAreRerunOnFreshSeeds) {
  Case c;
  c.ce_weight = true;
  c.seed = 2;  // even: 1.1x
  const FailureClass f = *failure_class("judge:grad_weight:out-of-bounds@eager");
  AnalyzeResult r = analyze(c, f, 1.1, fake_subject, {});
  ASSERT_EQ(r.status, CauseStatus::ABLATED);
  EXPECT_EQ(r.cause, "out-of-bounds@eager[ce_weight]");
  ASSERT_TRUE(r.confirm.ran());
  EXPECT_EQ(r.confirm.seeds, kConfirmSeeds);
  int even = 0;
  for (int k = 0; k < kConfirmSeeds; ++k) even += with_fresh_seed(c, k).seed % 2 == 0;
  EXPECT_EQ(r.confirm.exceed, even);
  EXPECT_DOUBLE_EQ(r.confirm.max_ratio, even ? 1.1 : 0.9);
  EXPECT_DOUBLE_EQ(r.confirm.first_ratio, 1.1);
}

TEST(Analyze, ACaseThatPassesAloneKeepsItsOutcomeLine) {
  Case c;  // all defaults: the fake passes it
  const FailureClass f = *failure_class("judge:grad_weight:out-of-bounds@eager");
  AnalyzeResult r = analyze(c, f, 3, fake_subject, {});
  EXPECT_EQ(r.status, CauseStatus::NOT_RUN);
  EXPECT_NE(r.note.find("depends on what ran before"), std::string::npos) << r.note;
  EXPECT_EQ(r.runs, 1);
}

TEST(Analyze, ALostResetOrTheBudgetGivesNoCause) {
  Case c;
  c.softcap = 3.0;
  c.label_smoothing = 0.1;
  const FailureClass f = *failure_class("judge:grad_weight:out-of-bounds@eager");
  auto crashing = [](const Case& k) {
    if (!k.softcap) return WorkerReply{"crash:SIGSEGV@eager", nullptr, nullptr, ""};
    return fake_subject(k);
  };
  AnalyzeResult r = analyze(c, f, 50, crashing, {});
  EXPECT_EQ(r.status, CauseStatus::NOT_RUN);
  EXPECT_NE(r.note.find("softcap (crash:SIGSEGV@eager)"), std::string::npos) << r.note;
  AnalyzeOptions o;
  o.max_runs = 2;
  r = analyze(c, f, 50, fake_subject, o);
  EXPECT_EQ(r.status, CauseStatus::NOT_RUN);
  EXPECT_NE(r.note.find("budget: 1 of 2 features"), std::string::npos) << r.note;
  r = analyze(c, f, 50, [](const Case&) -> WorkerReply { throw std::runtime_error("no worker"); }, {});
  EXPECT_EQ(r.status, CauseStatus::NOT_RUN);
  EXPECT_NE(r.note.find("no worker"), std::string::npos);
}

TEST(Analyze, ADifferenceIsWhatMustGoAway) {
  Case c;
  c.softcap = 3.0;
  c.ce_weight = true;
  c.seed = 1;  // odd: the marginal ce_weight path passes
  const FailureClass f = *sighting_class("regressed:judge:grad_weight:out-of-bounds@eager");
  EXPECT_EQ(f.key, "regressed:out-of-bounds@eager");
  // The baseline has the softcap bug too: only what the subject adds is the regression (none here).
  auto both = [](const Case& k) {
    WorkerReply r = fake_subject(k);
    r.baseline_outcome = r.outcome;
    r.baseline_report = r.report;
    return r;
  };
  AnalyzeOptions o;
  o.diff.change = Change::REGRESSED;
  EXPECT_EQ(analyze(c, f, 50, both, o).status, CauseStatus::NOT_RUN);
  auto clean_baseline = [](const Case& k) {
    WorkerReply r = fake_subject(k);
    r.baseline_outcome = "pass";
    r.baseline_report = report_with("eager", {{"grad_weight", "ok", 0.3}});
    return r;
  };
  EXPECT_EQ(analyze(c, f, 50, clean_baseline, o).cause, "regressed:out-of-bounds@eager[softcap]");
}

TEST(Differential, OutcomesOfTwoSides) {
  Change ch;
  EXPECT_EQ(differential_outcome("pass", "pass", &ch), "pass");
  EXPECT_EQ(ch, Change::NONE);
  EXPECT_EQ(differential_outcome("judge:loss:out-of-bounds@eager", "judge:loss:out-of-bounds@eager", &ch),
            "same:judge:loss:out-of-bounds@eager");
  EXPECT_FALSE(is_finding("same:judge:loss:out-of-bounds@eager"));
  EXPECT_EQ(differential_outcome("judge:loss:out-of-bounds@eager", "pass", &ch), "regressed:judge:loss:out-of-bounds@eager");
  EXPECT_EQ(ch, Change::REGRESSED);
  EXPECT_EQ(differential_outcome("pass", "tier1-decomposition@compiled:eager", &ch), "fixed:tier1-decomposition@compiled:eager");
  EXPECT_EQ(ch, Change::FIXED);
  EXPECT_EQ(differential_outcome("crash:SIGSEGV@eager", "judge:loss:out-of-bounds@eager", &ch), "changed:crash:SIGSEGV@eager");
  EXPECT_EQ(ch, Change::CHANGED);
}

struct TempDir {
  fs::path p;
  TempDir() {
    char tmpl[] = "/tmp/flce-cause-XXXXXX";
    p = ::mkdtemp(tmpl);
    fs::create_directories(p / "findings");
  }
  ~TempDir() { fs::remove_all(p); }
};

Sighting sighting(const std::string& key, const Case& c, const std::string& output, double ratio) {
  Sighting s;
  s.key = key;
  s.lane = "eager";
  s.case_json = to_json(c, -1);
  s.outcome = "judge:" + output + ":out-of-bounds@eager";
  s.report = report_with("eager", {{output, "out-of-bounds", ratio}});
  return s;
}

TEST(FindingBook, OneFindingPerCauseAcrossOutputsAndTwoCausesOnOneOutput) {
  TempDir d;
  CampaignState st;
  KnownList none;
  FindingBook book(d.p, st, none, false);
  Case sc;
  sc.softcap = 3.0;
  Case ls;
  ls.label_smoothing = 0.1;
  auto first = book.file(sighting("k1", sc, "grad_weight", 9), 1.0);
  ASSERT_TRUE(first.fresh && first.analyze);
  const std::string tentative = first.analyze->finding_id;
  // While it is analyzed, its class waits: a loss sighting of the same bug, and another bug.
  EXPECT_EQ(book.file(sighting("k2", sc, "loss", 4), 2.0).finding, nullptr);
  EXPECT_EQ(book.file(sighting("k3", ls, "grad_weight", 7), 3.0).finding, nullptr);
  EXPECT_EQ(book.parked(), 2u);
  AnalyzeResult r;
  r.status = CauseStatus::ABLATED;
  r.essential = {"softcap"};
  r.cause = "out-of-bounds@eager[softcap]";
  r.runs = 2;
  auto next = book.resolve(tentative, r, 4.0);
  ASSERT_EQ(st.findings.size(), 2u);  // the softcap finding, and the smoothing sighting as a new one
  const Finding& f = st.findings[0];
  EXPECT_EQ(f.key(), "out-of-bounds@eager[softcap]");
  EXPECT_EQ(f.id, finding_id("out-of-bounds@eager[softcap]"));
  EXPECT_TRUE(fs::exists(d.p / "findings" / f.id / "case.json"));
  EXPECT_EQ(f.count, 2);
  EXPECT_EQ(f.outputs, (std::map<std::string, int64_t>{{"grad_weight", 1}, {"loss", 1}}));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(st.findings[1].first_case, "k3");
  EXPECT_EQ(st.findings[1].cause_status, CauseStatus::PENDING);
  r.essential = {"label_smoothing"};
  r.cause = "out-of-bounds@eager[label_smoothing]";
  EXPECT_TRUE(book.resolve(next[0].finding_id, r, 5.0).empty());
  EXPECT_EQ(st.findings[1].key(), "out-of-bounds@eager[label_smoothing]");
  // A case with both flags counts for the most specific cause it carries (either: one each).
  Case both = sc;
  both.label_smoothing = 0.1;
  EXPECT_NE(book.file(sighting("k4", both, "grad_weight", 9), 6.0).finding, nullptr);
  EXPECT_EQ(st.findings[0].count + st.findings[1].count, 4);
}

TEST(FindingBook, TheSameCauseFromAnotherCaseMerges) {
  TempDir d;
  CampaignState st;
  KnownList none;
  FindingBook book(d.p, st, none, false);
  Case a;
  a.softcap = 3.0;
  auto fa = book.file(sighting("a", a, "loss", 5), 1.0);
  AnalyzeResult r;
  r.status = CauseStatus::ABLATED;
  r.essential = {"softcap"};
  r.cause = "out-of-bounds@eager[softcap]";
  book.resolve(fa.analyze->finding_id, r, 2.0);
  // A second finding of the class with another cause key first, later found to be the same.
  Case b;
  b.ce_weight = true;
  auto fb = book.file(sighting("b", b, "grad_input", 5), 3.0);
  ASSERT_TRUE(fb.analyze);
  const fs::path bdir = d.p / "findings" / fb.analyze->finding_id;
  EXPECT_TRUE(fs::exists(bdir));
  book.resolve(fb.analyze->finding_id, r, 4.0);
  ASSERT_EQ(st.findings.size(), 1u);
  EXPECT_EQ(st.findings[0].count, 2);
  EXPECT_FALSE(fs::exists(bdir));
}

TEST(FindingBook, UnanalyzedFindingsKeepTheirOutcomeLineAndCrashesNeedNoAnalysis) {
  TempDir d;
  CampaignState st;
  KnownList none;
  FindingBook book(d.p, st, none, false);
  Case c;
  c.softcap = 3.0;
  auto f = book.file(sighting("a", c, "loss", 5), 1.0);
  book.file(sighting("b", c, "loss", 5), 2.0);
  book.file(sighting("c", c, "grad_input", 5), 2.0);
  book.close("budget: test", 3.0);
  ASSERT_EQ(st.findings.size(), 2u);  // by outcome line: the loss one (2 cases) and the grad_input one
  EXPECT_EQ(st.findings[0].cause_status, CauseStatus::NOT_RUN);
  EXPECT_EQ(st.findings[0].key(), "judge:loss:out-of-bounds@eager");
  EXPECT_EQ(st.findings[0].id, finding_id("judge:loss:out-of-bounds@eager"));
  EXPECT_EQ(st.findings[0].count, 2);
  EXPECT_EQ(st.findings[0].cause_note, "budget: test");
  EXPECT_EQ(st.findings[1].key(), "judge:grad_input:out-of-bounds@eager");
  (void)f;
  Sighting crash;
  crash.key = "d";
  crash.lane = "eager";
  crash.case_json = to_json(c, -1);
  crash.outcome = "crash:SIGSEGV@eager";
  auto fc = book.file(crash, 4.0);
  EXPECT_TRUE(fc.fresh);
  EXPECT_FALSE(fc.analyze);
  EXPECT_EQ(fc.finding->cause_status, CauseStatus::NONE);
}

// Main-s223 (H200): a typed compile failure first seen at the case's backend before its deferred
// ladder walk ("...@compiled:inductor"), then, once walked, at its first failing stage
// ("...@compiled:eager"); its analysis ran out of budget, so both sightings were keyed by outcome
// line. They are one bug: one finding, the later sighting counted there.
TEST(FindingBook, AnUnanalyzedCompileFailureSeenAtAnotherStageIsOneFinding) {
  TempDir d;
  CampaignState st;
  KnownList none;
  FindingBook book(d.p, st, none, false);
  Case c;
  c.compile.fullgraph = true;
  auto compile_sighting = [&](const std::string& key, const std::string& stage) {
    Sighting s;
    s.key = key;
    s.lane = "compiled";
    s.case_json = to_json(c, -1);
    s.outcome = "dynamo-symnode-no-value@compiled:" + stage;
    s.report = nlohmann::json::object();
    return s;
  };
  auto first = book.file(compile_sighting("a", "inductor"), 1.0);
  ASSERT_TRUE(first.fresh && first.analyze);
  EXPECT_EQ(book.file(compile_sighting("b", "eager"), 2.0).finding, nullptr);  // parked meanwhile
  AnalyzeResult r;
  r.status = CauseStatus::NOT_RUN;
  r.note = "budget: 6 of 8 features tried";
  book.resolve(first.analyze->finding_id, r, 3.0);
  book.file(compile_sighting("c", "eager"), 4.0);
  book.close("the campaign ended", 5.0);
  ASSERT_EQ(st.findings.size(), 1u);
  EXPECT_EQ(st.findings[0].count, 3);
  EXPECT_EQ(st.findings[0].signature, "dynamo-symnode-no-value@compiled:inductor");
  // a numeric finding's line stays exact: another output is another line
  EXPECT_FALSE(same_failure("judge:loss:out-of-bounds@compiled", "judge:grad_input:out-of-bounds@compiled"));
}

// The pinned case of Liger main's softcap regression, as corpus/cases has it (fp32, softcap,
// reduction none), at DIR/cases/sc.json.
void write_softcap_pin_case(const fs::path& dir) {
  fs::create_directories(dir / "cases");
  Case pin;
  pin.input_dtype = pin.weight_dtype = DType::F32;
  pin.softcap = 3.0;
  pin.reduction = Reduction::NONE;
  std::ofstream(dir / "cases" / "sc.json") << to_json(pin);
}

// The campaign drops the queued neighbours of a finding the known list explains: the book says,
// after the analysis, whether the tentative finding ended as a known one (renamed or merged).
TEST(FindingBook, SaysWhetherAnAnalyzedFindingEndedKnown) {
  TempDir d;
  fs::create_directories(d.p / "cases");
  Case sc;
  sc.softcap = 3.0;
  std::ofstream(d.p / "cases" / "sc.json") << to_json(sc);
  std::ofstream(d.p / "expectations.json")
      << R"([{"case": "cases/sc.json", "subject": "model", "expect": [{"outcome": "judge:grad_weight:out-of-bounds@eager",
             "cause": ["softcap"]}]}])";
  const KnownList known = load_known({(d.p / "expectations.json").string()}, "model");
  CampaignState st;
  FindingBook book(d.p / "camp", st, known, false);
  Case ls;
  ls.label_smoothing = 0.1;
  auto a = book.file(sighting("a", sc, "grad_weight", 9), 1.0);
  ASSERT_TRUE(a.analyze);
  AnalyzeResult r;
  r.status = CauseStatus::ABLATED;
  r.essential = {"softcap"};
  r.cause = "out-of-bounds@eager[softcap]";
  EXPECT_FALSE(book.resolved_known(a.analyze->finding_id));  // not resolved yet
  auto next = book.resolve(a.analyze->finding_id, r, 2.0);
  EXPECT_TRUE(book.resolved_known(a.analyze->finding_id));
  auto b = book.file(sighting("b", ls, "grad_weight", 9), 3.0);
  ASSERT_TRUE(b.analyze);
  r.essential = {"label_smoothing"};
  r.cause = "out-of-bounds@eager[label_smoothing]";
  book.resolve(b.analyze->finding_id, r, 4.0);
  EXPECT_FALSE(book.resolved_known(b.analyze->finding_id));
}

TEST(Known, ExpectationsMatchByClassAndPinnedFeaturesAndEarlierCampaignsByCause) {
  TempDir d;
  write_softcap_pin_case(d.p);
  std::ofstream(d.p / "expectations.json")
      << R"([{"case": "cases/sc.json", "subject": "liger", "expect": [{"torch": ">=2.11,<2.12", "device": "cuda",
             "subject_version": "liger-kernel git ead96b618e5c", "outcome": "judge:grad_weight:out-of-bounds@eager"}]},
            {"case": "cases/sc.json", "subject": "model", "expect": [{"outcome": "pass"}]}])";
  KnownList k = load_known({(d.p / "expectations.json").string()}, "liger");
  ASSERT_EQ(k.entries.size(), 1u);
  Finding f;
  f.signature = "judge:loss:out-of-bounds@eager";
  f.failure = "out-of-bounds@eager";
  f.cause_status = CauseStatus::ABLATED;
  f.essential = {"softcap"};
  f.cause = "out-of-bounds@eager[softcap]";
  EXPECT_TRUE(match_known(k, f, "2.11.0+cu130", true, "liger-kernel git ead96b618e5c (...)"));
  EXPECT_FALSE(match_known(k, f, "2.11.0+cu130", true, "liger-kernel 0.8.5 (...)"));  // another version
  EXPECT_FALSE(match_known(k, f, "2.13.0", true, "liger-kernel git ead96b618e5c"));   // another torch
  f.essential = {"ce_weight"};  // a cause the pinned case does not carry
  EXPECT_FALSE(match_known(k, f, "2.11.0", true, "liger-kernel git ead96b618e5c"));
  // An earlier campaign: its report.json, matched on the cause key.
  nlohmann::json rep{{"findings", nlohmann::json::array({{{"id", "x"}, {"signature", "judge:loss:out-of-bounds@eager"},
                                                           {"cause_status", "ablated"}, {"cause", "out-of-bounds@eager[ce_weight]"}}})}};
  fs::create_directories(d.p / "camp");
  std::ofstream(d.p / "camp" / "report.json") << rep.dump();
  KnownList k2 = load_known({(d.p / "camp").string()}, "liger");
  f.cause = "out-of-bounds@eager[ce_weight]";
  EXPECT_TRUE(match_known(k2, f, "2.11.0", true, ""));
  f.cause = "out-of-bounds@eager[softcap]";
  EXPECT_FALSE(match_known(k2, f, "2.11.0", true, ""));
  EXPECT_THROW(load_known({(d.p / "nope").string()}, "liger"), KnownInputError);
  std::ofstream(d.p / "bad.json") << R"({"not": "a report"})";
  EXPECT_THROW(load_known({(d.p / "bad.json").string()}, "liger"), KnownInputError);
}


// Found on Liger main (H200): a marginal [reduction=none] finding was filed under the softcap pin,
// whose case has reduction=none, and so never read as news. A pin that names its cause keeps it.
TEST(Known, APinWithACauseTakesItsBugAndNarrowerViewsNotBroaderOnes) {
  TempDir d;
  write_softcap_pin_case(d.p);
  const auto pin_with = [&](const std::string& cause) {
    std::ofstream(d.p / "expectations.json")
        << R"([{"case": "cases/sc.json", "subject": "liger", "expect": [{"device": "cuda",
               "outcome": "judge:grad_weight:out-of-bounds@eager")" + cause + "}]}]";
    return load_known({(d.p / "expectations.json").string()}, "liger");
  };
  Finding f;
  f.signature = "judge:loss:out-of-bounds@eager";
  f.failure = "out-of-bounds@eager";
  f.cause_status = CauseStatus::ABLATED;
  const auto known_with = [&](const KnownList& k, std::vector<std::string> essential) {
    f.essential = std::move(essential);
    return match_known(k, f, "2.11.0", true, "") != nullptr;
  };
  const KnownList plain = pin_with("");
  EXPECT_TRUE(known_with(plain, {"reduction=none"}));  // without a cause: any feature the case carries
  const KnownList caused = pin_with(R"(, "cause": ["softcap"])");
  EXPECT_TRUE(known_with(caused, {"softcap"}));
  EXPECT_TRUE(known_with(caused, {"dtype=fp32", "softcap"}));
  EXPECT_TRUE(known_with(caused, {"dtype=fp16", "softcap"}));  // narrower, though the case is fp32
  EXPECT_FALSE(known_with(caused, {"reduction=none"}));       // broader: another bug
  EXPECT_FALSE(known_with(caused, {}));
  f.failure = "missing@eager";
  EXPECT_FALSE(known_with(caused, {"softcap"}));  // another class
  // A cause the pinned case does not show is refused, named.
  try {
    pin_with(R"(, "cause": ["ce_weight"])");
    ADD_FAILURE() << "a cause feature the case lacks was accepted";
  } catch (const KnownInputError& e) {
    EXPECT_NE(std::string(e.what()).find("cause feature 'ce_weight'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pin_with(R"(, "cause": "softcap")"), KnownInputError);  // not an array
}

// Planted copies of Liger main read against a main campaign's findings (H200): main's softcap bug,
// ablated there as [softcap], showed on a copy as [dtype=fp16,softcap], a narrower view of it,
// and was listed as new. An earlier campaign's ablated cause takes its narrower views, as a pin does.
TEST(Known, AnEarlierCampaignsCauseTakesItsNarrowerViews) {
  TempDir d;
  nlohmann::json rep{{"findings", nlohmann::json::array({{{"id", "x"}, {"signature", "judge:loss:out-of-bounds@eager"},
                                                           {"cause_status", "ablated"}, {"failure", "out-of-bounds@eager"},
                                                           {"essential", {"softcap"}},
                                                           {"cause", "out-of-bounds@eager[softcap]"}},
                                                          {{"id", "y"}, {"signature", "tier1-decomposition@compiled:eager"},
                                                           {"cause_status", "ablated"}, {"failure", "tier1-decomposition@compiled"},
                                                           {"essential", nlohmann::json::array()},
                                                           {"cause", "tier1-decomposition@compiled[]"}}})}};
  fs::create_directories(d.p / "main");
  std::ofstream(d.p / "main" / "report.json") << rep.dump();
  const KnownList k = load_known({(d.p / "main").string()}, "liger");
  Finding f;
  f.signature = "judge:grad_input:out-of-bounds@eager";
  f.failure = "out-of-bounds@eager";
  f.cause_status = CauseStatus::ABLATED;
  const auto known_with = [&](std::vector<std::string> essential) {
    f.essential = essential;
    f.cause = f.failure + "[" + fmt::format("{}", fmt::join(essential, ",")) + "]";
    return match_known(k, f, "2.11.0", true, "") != nullptr;
  };
  EXPECT_TRUE(known_with({"softcap"}));
  EXPECT_TRUE(known_with({"dtype=fp16", "softcap"}));  // narrower: the same bug
  EXPECT_FALSE(known_with({"bias"}));                 // another bug: new
  EXPECT_FALSE(known_with({}));                       // broader: new
  f.failure = "missing@eager";
  EXPECT_FALSE(known_with({"dtype=fp16", "softcap"}));  // another class
  // A cause with no feature stands only for itself: [autocast=fp16,...] is not "tier1 with no feature".
  f.failure = "tier1-decomposition@compiled";
  EXPECT_TRUE(known_with({}));
  EXPECT_FALSE(known_with({"autocast=fp16", "dtype=fp32"}));
}

// pytorch#181735's assertion showed on five Liger trees of one night (H200), each time as new:
// its cause was [] or a feature the pinned case lacks. A typed signature names its bug wherever it
// shows, so a pin of one without a cause takes any cause; a bucket or a catch-all does not.
TEST(Known, APinOfATypedSignatureWithoutACauseTakesAnyCause) {
  TempDir d;
  write_softcap_pin_case(d.p);
  const auto pin_of = [&](const std::string& outcome) {
    std::ofstream(d.p / "expectations.json")
        << R"([{"case": "cases/sc.json", "subject": "liger", "expect": [{"device": "cuda", "outcome": ")" + outcome +
               R"("}]}])";
    return load_known({(d.p / "expectations.json").string()}, "liger");
  };
  const auto known_with = [&](const KnownList& k, const std::string& failure, std::vector<std::string> essential) {
    Finding f;
    f.signature = failure + ":inductor";
    f.failure = failure;
    f.cause_status = CauseStatus::ABLATED;
    f.essential = std::move(essential);
    return match_known(k, f, "2.11.0", true, "") != nullptr;
  };
  const KnownList typed = pin_of("inductor-triton-wrapper-decomp-assert@compiled:inductor");
  ASSERT_EQ(typed.entries.size(), 1u);
  EXPECT_TRUE(typed.entries[0].typed_signature);
  EXPECT_TRUE(known_with(typed, "inductor-triton-wrapper-decomp-assert@compiled", {}));
  EXPECT_TRUE(known_with(typed, "inductor-triton-wrapper-decomp-assert@compiled", {"ce_weight"}));
  EXPECT_FALSE(known_with(typed, "tier1-decomposition@compiled", {}));  // another signature
  const KnownList bucket = pin_of("bucket-0123456789ab@compiled:inductor");
  EXPECT_FALSE(bucket.entries[0].typed_signature);
  EXPECT_FALSE(known_with(bucket, "bucket-0123456789ab@compiled", {}));  // features decide, as before
  const KnownList generic = pin_of("fake-tensor-call@compiled:inductor");
  EXPECT_FALSE(generic.entries[0].typed_signature);
  EXPECT_FALSE(known_with(generic, "fake-tensor-call@compiled", {"ce_weight"}));
}

TEST(Known, AKnownSignatureTakesTheStageItsPinGivesHere) {
  TempDir d;
  write_softcap_pin_case(d.p);
  std::ofstream(d.p / "expectations.json")
      << R"([{"case": "cases/sc.json", "subject": "liger", "expect": [)"
         R"({"torch": ">=2.13", "device": "cuda", "outcome": "tier2-lowering@compiled:inductor"},)"
         R"({"torch": ">=2.8,<2.13", "device": "cuda", "outcome": "tier1-decomposition@compiled:eager"}]}])";
  const KnownList k = load_known({(d.p / "expectations.json").string()}, "liger");
  const auto stage = known_stage(k, "tier1-decomposition", "2.11.0+cu130", true, "");
  ASSERT_TRUE(stage);
  EXPECT_EQ(stage->first, "eager");
  EXPECT_NE(stage->second.find("expectations.json"), std::string::npos);
  EXPECT_FALSE(known_stage(k, "tier1-decomposition", "2.13.0", true, ""));   // the pin is not for this torch
  EXPECT_FALSE(known_stage(k, "tier1-decomposition", "2.11.0", false, ""));  // nor for CPU
  EXPECT_FALSE(known_stage(k, "tier1", "2.11.0", true, ""));                 // a prefix is not the signature
  EXPECT_EQ(known_stage(k, "tier2-lowering", "2.13.0", true, "")->first, "inductor");
}

// The pinned corpus itself: torch's cross-chunk bf16 sum of grad_weight (a pin with cause
// [accum_dtype=fp32]) takes the finding seed 977's campaign ablated to [accum_dtype=fp32,bias,
// reduction=sum] on torch-native, and no weight-gradient cause without fp32 accumulation.
TEST(Known, TheCorpusPinOfTorchsCrossChunkSumTakesItsNarrowerCauses) {
  KnownList k = load_known({std::string(FLCE_SOURCE_DIR) + "/corpus/expectations.json"}, "torch-native");
  Finding f;
  f.signature = "judge:grad_weight:out-of-bounds@eager";
  f.failure = "out-of-bounds@eager";
  f.cause_status = CauseStatus::ABLATED;
  f.essential = {"accum_dtype=fp32", "bias", "reduction=sum"};
  f.cause = "out-of-bounds@eager[accum_dtype=fp32,bias,reduction=sum]";
  const KnownEntry* e = match_known(k, f, "2.13.0+cu130", false, "torch 2.13.0+cu130");
  ASSERT_TRUE(e);
  EXPECT_NE(e->source.find("torch-native-default-chunks-grad-weight-bf16"), std::string::npos) << e->source;
  EXPECT_FALSE(match_known(k, f, "2.11.0", false, "torch 2.11.0"));  // the pin is for torch 2.13
  f.essential = {"bias", "reduction=sum"};
  f.cause = "out-of-bounds@eager[bias,reduction=sum]";
  EXPECT_FALSE(match_known(k, f, "2.13.0+cu130", false, "torch 2.13.0+cu130"));
}

}  // namespace
}  // namespace flce
