// flce gate / matrix: the pure parts (spec parsing, verdicts, grouping, reports, version
// order, expectations) and the worker client's crash, timeout and restart handling
// (against tests/data/gate/fake_python.sh, so no torch is needed).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "gate/gate.hpp"
#include "gate/matrix.hpp"
#include "oracles/subject_worker.hpp"

namespace flce {
namespace {

TEST(GateSpec, ParsesEveryKey) {
  GateSpec s = parse_gate_spec("subject=liger,path=/src/liger/src,python=/v/bin/python");
  EXPECT_EQ(s.subject, "liger");
  EXPECT_EQ(s.path, "/src/liger/src");
  EXPECT_EQ(s.python, "/v/bin/python");
  GateSpec g = parse_gate_spec("subject=liger,git=/work/Liger-Kernel@v0.6.1");
  EXPECT_EQ(g.git_repo, "/work/Liger-Kernel");
  EXPECT_EQ(g.git_ref, "v0.6.1");
}

TEST(GateSpec, RejectsWhatItCannotUse) {
  EXPECT_THROW(parse_gate_spec("model"), std::invalid_argument);
  EXPECT_THROW(parse_gate_spec("path=/x"), std::invalid_argument);           // no subject
  EXPECT_THROW(parse_gate_spec("subject=model,colour=red"), std::invalid_argument);
  EXPECT_THROW(parse_gate_spec("subject=liger,git=/repo"), std::invalid_argument);  // no @REF
  EXPECT_THROW(parse_gate_spec("subject="), std::invalid_argument);
}

TEST(GateVerdict, EveryTransition) {
  const std::string tier2 = "tier2-lowering@compiled:inductor", tier1 = "tier1-decomposition@compiled:eager";
  EXPECT_EQ(gate_verdict("pass", "pass"), GateVerdict::SAME_PASS);
  EXPECT_EQ(gate_verdict(tier2, tier2), GateVerdict::SAME_FAILURE);
  EXPECT_EQ(gate_verdict("unsupported", "unsupported"), GateVerdict::UNSUPPORTED);
  EXPECT_EQ(gate_verdict("pass", tier2), GateVerdict::REGRESSED);
  // Failing to compile on both sides, differently: listed, not a regression.
  EXPECT_EQ(gate_verdict(tier1, tier2), GateVerdict::STILL_FAILING);
  EXPECT_EQ(gate_verdict(tier1, "bucket-4f5af897dc14@compiled:inductor"), GateVerdict::STILL_FAILING);
  // Any other change of failure is: a compile error turning into wrong numbers, a crash...
  EXPECT_EQ(gate_verdict(tier1, "judge:loss:out-of-bounds@compiled"), GateVerdict::CHANGED);
  EXPECT_EQ(gate_verdict("judge:loss:out-of-bounds@compiled", tier1), GateVerdict::CHANGED);
  EXPECT_EQ(gate_verdict(tier1, "crash:SIGSEGV@compiled:inductor"), GateVerdict::CHANGED);
  // A symptom the case's expectation pins for this torch (one of its alternatives) is still failing.
  const std::string pinned = "inductor-cpu-index-out-of-bounds@compiled:inductor | judge:grad_weight:out-of-bounds@compiled";
  EXPECT_EQ(gate_verdict(tier1, "judge:grad_weight:out-of-bounds@compiled", false, pinned), GateVerdict::STILL_FAILING);
  EXPECT_EQ(gate_verdict(tier1, "judge:grad_weight:out-of-bounds@compiled", true, pinned), GateVerdict::CHANGED);
  EXPECT_EQ(gate_verdict(tier1, "judge:loss:out-of-bounds@compiled", false, pinned), GateVerdict::CHANGED);
  EXPECT_EQ(gate_verdict("pass", "judge:grad_weight:out-of-bounds@compiled", false, pinned), GateVerdict::REGRESSED);
  EXPECT_EQ(gate_verdict("judge:grad_weight:missing@eager", "bucket-0123456789ab@eager:-"), GateVerdict::CHANGED);
  EXPECT_EQ(gate_verdict(tier2, "pass"), GateVerdict::FIXED);
  EXPECT_EQ(gate_verdict("pass", "unsupported"), GateVerdict::LOST);
  EXPECT_EQ(gate_verdict("unsupported", tier2), GateVerdict::NEW_FAILURE);
  EXPECT_EQ(gate_verdict("unsupported", "pass"), GateVerdict::NEW_PASS);
  // A parameter the base's subject lacks (an older Liger tree without return_token_accuracy):
  // whatever the candidate shows there is new coverage, never a regression.
  const std::string lacks = "unsupported-by-subject:return_token_accuracy";
  EXPECT_EQ(gate_verdict(lacks, "pass"), GateVerdict::NEW_COVERAGE);
  EXPECT_EQ(gate_verdict(lacks, tier2), GateVerdict::NEW_COVERAGE);
  EXPECT_EQ(gate_verdict(lacks, "judge:token_accuracy:out-of-bounds@eager"), GateVerdict::NEW_COVERAGE);
  EXPECT_EQ(gate_verdict(lacks, lacks), GateVerdict::UNSUPPORTED);
  // Still lacking one of two, or not runnable here on the candidate: neither side ran it.
  EXPECT_EQ(gate_verdict("unsupported-by-subject:return_token_accuracy+return_predicted_tokens", lacks),
            GateVerdict::UNSUPPORTED);
  EXPECT_EQ(gate_verdict(lacks, "unsupported"), GateVerdict::UNSUPPORTED);
  EXPECT_EQ(gate_verdict("unsupported", lacks), GateVerdict::UNSUPPORTED);
  // The candidate dropping a parameter the base took is coverage lost.
  EXPECT_EQ(gate_verdict("pass", lacks), GateVerdict::LOST);
  EXPECT_EQ(gate_verdict(tier2, lacks), GateVerdict::LOST);
  EXPECT_EQ(name(GateVerdict::NEW_COVERAGE), "new-coverage");
  for (auto v : {GateVerdict::REGRESSED, GateVerdict::CHANGED, GateVerdict::LOST, GateVerdict::NEW_FAILURE})
    EXPECT_TRUE(is_regression(v)) << name(v);
  for (auto v : {GateVerdict::SAME_PASS, GateVerdict::SAME_FAILURE, GateVerdict::FIXED, GateVerdict::NEW_PASS,
                 GateVerdict::SKIPPED, GateVerdict::UNSUPPORTED, GateVerdict::STILL_FAILING, GateVerdict::NEW_COVERAGE})
    EXPECT_FALSE(is_regression(v)) << name(v);
}

GateRow row(const std::string& id, DType d, std::optional<DType> accum, Backend b, const std::string& base,
            const std::string& cand) {
  GateRow r;
  r.gc.id = id;
  r.gc.source = "sample";
  r.gc.c.input_dtype = r.gc.c.weight_dtype = d;
  r.gc.c.accum_dtype = accum;
  r.gc.c.compile.backend = b;
  r.base = RunReport{};
  r.base->outcome = base;
  r.candidate = RunReport{};
  r.candidate->outcome = cand;
  r.verdict = gate_verdict(base, cand);
  return r;
}

TEST(GateGroups, CollapseDtypesAndKeepAccumApart) {
  const std::string tier2 = "tier2-lowering@compiled:inductor";
  std::vector<GateRow> rows{
      row("a", DType::BF16, std::nullopt, Backend::INDUCTOR, "pass", tier2),
      row("b", DType::F16, std::nullopt, Backend::INDUCTOR, "pass", tier2),
      row("c", DType::F32, std::nullopt, Backend::INDUCTOR, "pass", tier2),
      row("d", DType::F32, DType::F32, Backend::INDUCTOR, "pass", tier2),
      row("e", DType::BF16, DType::F32, Backend::INDUCTOR, tier2, tier2),   // same failure: no regression
      row("f", DType::BF16, std::nullopt, Backend::INDUCTOR, tier2, "pass"),  // fixed
  };
  auto groups = group_regressions(rows);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].title(), "accum_dtype none, bf16/fp16/fp32, compiled[inductor]: new " + tier2);
  EXPECT_EQ(groups[0].rows, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(groups[1].accum, "fp32");
  EXPECT_EQ(groups[1].rows, (std::vector<size_t>{3}));
}

TEST(GateGroups, DifferentBaseOutcomesAreDifferentGroups) {
  std::vector<GateRow> rows{
      row("a", DType::F16, std::nullopt, Backend::INDUCTOR, "pass", "tier2-lowering@compiled:inductor"),
      row("b", DType::F16, std::nullopt, Backend::INDUCTOR, "judge:grad_weight:nonfinite@compiled",
          "tier2-lowering@compiled:inductor"),
  };
  auto groups = group_regressions(rows);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_NE(groups[1].title().find("(base: judge:grad_weight:nonfinite@compiled)"), std::string::npos);
}

TEST(GateReports, JUnitCountsRegressionsAndEscapes) {
  GateReport rep;
  rep.opt.base = parse_gate_spec("subject=model");
  rep.opt.candidate = parse_gate_spec("subject=model-dtype-out");
  rep.rows = {row("a<1>", DType::BF16, std::nullopt, Backend::INDUCTOR, "pass", "tier2-lowering@compiled:inductor"),
              row("b", DType::BF16, std::nullopt, Backend::INDUCTOR, "pass", "pass")};
  GateRow skipped;
  skipped.gc.id = "c";
  skipped.gc.source = "corpus";
  skipped.skip_reason = "needs CUDA";
  rep.rows.push_back(skipped);
  rep.groups = group_regressions(rep.rows);
  std::string x = gate_junit(rep);
  EXPECT_NE(x.find("tests=\"3\" failures=\"1\" skipped=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("name=\"a&lt;1&gt;\""), std::string::npos);
  EXPECT_EQ(x.find("a<1>"), std::string::npos);
  auto j = gate_json(rep);
  EXPECT_EQ(j["summary"]["regressions"], 1);
  EXPECT_EQ(j["regression_groups"].size(), 1u);
  std::string md = gate_markdown(rep);
  EXPECT_NE(md.find("❌ 1 regression"), std::string::npos) << md;
}

TEST(GateReports, UnsupportedBySubjectIsCountedPerParameterAsNewCoverage) {
  GateReport rep;
  rep.opt.base = parse_gate_spec("subject=old:flce");
  rep.opt.candidate = parse_gate_spec("subject=model");
  const std::string acc = "unsupported-by-subject:return_token_accuracy";
  rep.rows = {row("acc", DType::BF16, std::nullopt, Backend::INDUCTOR, acc, "pass"),
              row("both", DType::BF16, std::nullopt, Backend::INDUCTOR,
                  "unsupported-by-subject:return_token_accuracy+return_predicted_tokens", "pass"),
              row("plain", DType::BF16, std::nullopt, Backend::INDUCTOR, "pass", "pass")};
  rep.groups = group_regressions(rep.rows);
  EXPECT_EQ(rep.regressions(), 0);
  EXPECT_EQ(rep.count(GateVerdict::NEW_COVERAGE), 2);
  auto j = gate_json(rep);
  EXPECT_EQ(j["summary"]["new_coverage"], 2);
  EXPECT_EQ(j["summary"]["unsupported_by_subject"]["base"]["return_token_accuracy"], 2);
  EXPECT_EQ(j["summary"]["unsupported_by_subject"]["base"]["return_predicted_tokens"], 1);
  EXPECT_TRUE(j["summary"]["unsupported_by_subject"]["candidate"].empty());
  std::string md = gate_markdown(rep);
  EXPECT_NE(md.find("✅ no regressions"), std::string::npos) << md;
  EXPECT_NE(md.find("base subject lacks parameters these cases use"), std::string::npos) << md;
  EXPECT_NE(md.find("`return_token_accuracy` (2 cases)"), std::string::npos) << md;
  EXPECT_NE(md.find("### New coverage"), std::string::npos) << md;
  EXPECT_EQ(gate_junit(rep).find("<failure"), std::string::npos);
}

TEST(Matrix, TorchVersionsOrderByRelease) {
  EXPECT_LT(compare_torch_versions("2.8.0+cu128", "2.13.0+cu130"), 0);
  EXPECT_LT(compare_torch_versions("2.12.1", "2.13.0"), 0);
  EXPECT_EQ(compare_torch_versions("2.13.0+cpu", "2.13.0+cu130"), 0);
  EXPECT_GT(compare_torch_versions("2.15.0", "2.9.1"), 0);
}

TEST(Matrix, ExpectationsApplyPerTorchAndDevice) {
  std::vector<ExpectRule> rules{{">=2.13", "any", "tier2-lowering@compiled:inductor"},
                                {">=2.8,<2.13", "cpu", "tier1-decomposition@compiled:eager"}};
  EXPECT_EQ(expected_outcome(rules, "2.15.0+cu132", false), "tier2-lowering@compiled:inductor");
  EXPECT_EQ(expected_outcome(rules, "2.11.0+cu130", false), "tier1-decomposition@compiled:eager");
  EXPECT_EQ(expected_outcome(rules, "2.11.0+cu130", true), "");  // cpu-only rule
  EXPECT_EQ(expected_outcome(rules, "2.7.1", false), "");
  EXPECT_EQ(expectation_verdict("", "pass"), "new");
  EXPECT_EQ(expectation_verdict("pass", "pass"), "as-expected");
  EXPECT_EQ(expectation_verdict("tier2-lowering@compiled:inductor", "pass"), "fixed");
  EXPECT_EQ(expectation_verdict("pass", "tier2-lowering@compiled:inductor"), "regressed");
  EXPECT_EQ(expectation_verdict("tier1-decomposition@compiled:eager", "tier2-lowering@compiled:inductor"), "changed");
  const std::string alts = "inductor-cpu-index-out-of-bounds@compiled:inductor | judge:grad_weight:nonfinite@compiled";
  EXPECT_EQ(expectation_verdict(alts, "judge:grad_weight:nonfinite@compiled"), "as-expected");
  EXPECT_EQ(expectation_verdict(alts, "pass"), "fixed");
  EXPECT_EQ(expectation_verdict(alts, "judge:grad_weight:out-of-bounds@compiled"), "changed");
}

TEST(Matrix, WorkaroundRowsFollowTheirSubject) {
  std::vector<MatrixRow> rows{{"a.json", "model", Case{}, {{">=2.8", "any", "pass"}}},
                              {"b.json", "model+workaround", Case{}, {}}};
  add_workaround_rows(rows);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].subject, "model+workaround");
  EXPECT_TRUE(rows[1].expect.empty());
  EXPECT_EQ(rows[2].subject, "model+workaround");
}

// ---- the worker client against a fake interpreter

WorkerOptions fake(double timeout_s = 30) {
  WorkerOptions o;
  o.python = std::string(FLCE_SOURCE_DIR) + "/tests/data/gate/fake_python.sh";
  o.timeout_s = timeout_s;
  o.label = "fake";
  return o;
}

TEST(SubjectWorker, CrashIsAnErrorAndTheWorkerRestarts) {
  SubjectWorker w(fake());
  EXPECT_EQ(w.torch_version(), "9.9.9");
  Case c;
  Inputs in = make_inputs(c);
  SubjectResult r = w.run(c, in, "crash", "eager", std::nullopt, "");
  ASSERT_EQ(r.status, SubjectStatus::ERROR);
  ASSERT_EQ(r.chain.size(), 1u);
  EXPECT_EQ(r.chain[0].type, "flce.WorkerCrash");
  EXPECT_EQ(r.chain[0].message, "worker killed by SIGSEGV");
  SubjectResult next = w.run(c, in, "model", "eager", std::nullopt, "");
  EXPECT_EQ(next.status, SubjectStatus::UNSUPPORTED);
  EXPECT_EQ(next.reason, "fake worker");
}

TEST(SubjectWorker, HangIsKilledAtTheTimeout) {
  SubjectWorker w(fake(1.0));
  Case c;
  Inputs in = make_inputs(c);
  auto t0 = std::chrono::steady_clock::now();
  SubjectResult r = w.run(c, in, "hang", "compiled", Backend::INDUCTOR, "");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, SubjectStatus::ERROR);
  EXPECT_EQ(r.chain.at(0).type, "flce.WorkerTimeout");
  EXPECT_LT(s, 10.0);
  EXPECT_EQ(w.run(c, in, "model", "eager", std::nullopt, "").status, SubjectStatus::UNSUPPORTED);
}

TEST(SubjectWorker, MissingInterpreterIsNamedAndLeavesNothing) {
  // A private TMPDIR, so workers of tests running in parallel do not count.
  namespace fs = std::filesystem;
  std::string tmp = (fs::temp_directory_path() / "flce-gate-test-XXXXXX").string();
  ASSERT_TRUE(mkdtemp(tmp.data()));
  const char* old = getenv("TMPDIR");
  std::string saved = old ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  WorkerOptions o = fake();
  o.python = "/nonexistent/bin/python";
  try {
    SubjectWorker w(o);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no Python interpreter at /nonexistent/bin/python"), std::string::npos);
  }
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));  // the worker's directory went with the failed start
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace flce
