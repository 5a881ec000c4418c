// The three-way verdict (judge/blame.hpp): which side of an out-of-bounds output is out of
// line, by hand-made verdicts and through run_case with a fake subject runner and a fake
// reference-cuda oracle (CPU, no Python).
#include <gtest/gtest.h>

#include <map>

#include "judge/blame.hpp"
#include "judge/differential.hpp"
#include "oracles/golden.hpp"

using namespace flce;

namespace {

OracleVerdict verdict(const std::string& oracle, double grad_weight_ratio) {
  OutputVerdict loss;
  loss.output = "loss";
  loss.worst_ratio = 0.1;
  OutputVerdict gw;
  gw.output = "grad_weight";
  gw.worst_ratio = grad_weight_ratio;
  if (grad_weight_ratio > 1) gw.finding = Flaw::OUT_OF_BOUNDS;
  return {oracle, {loss, gw}};
}

Blame only(const std::vector<Blame>& bs) {
  EXPECT_EQ(bs.size(), 1u);
  return bs.empty() ? Blame{} : bs[0];
}

}  // namespace

TEST(Blame, SubjectOutOfLineAgainstTheReference) {
  OracleVerdict e = verdict("eager", 1.97), r = verdict("reference-cuda", 0.31);
  Blame b = only(blame({&e, &r}));
  EXPECT_EQ(b.oracle, "eager");
  EXPECT_EQ(b.output, "grad_weight");
  EXPECT_EQ(b.against, "reference-cuda");
  EXPECT_DOUBLE_EQ(b.against_ratio, 0.31);
  EXPECT_EQ(b.guilty, "subject");
  EXPECT_EQ(b.line, "subject 1.97x bound, reference-cuda 0.31x: subject out of line");
}

TEST(Blame, SubjectAndReferenceBothExceedPutTheBoundInDoubt) {
  OracleVerdict e = verdict("eager", 1.4), r = verdict("reference-cuda", 1.3);
  auto bs = blame({&e, &r});
  ASSERT_EQ(bs.size(), 2u);  // each side's out-of-bounds output has its line
  EXPECT_EQ(bs[0].guilty, "bound-or-contract");
  EXPECT_EQ(bs[0].line, "subject 1.4x bound, reference-cuda 1.3x: both exceed — bound or contract suspect (triage MATH.md)");
  EXPECT_EQ(bs[1].oracle, "reference-cuda");
  EXPECT_EQ(bs[1].guilty, "bound-or-contract");
}

TEST(Blame, ReferenceOutOfLineAgainstTheSubject) {
  OracleVerdict e = verdict("eager", 0.5), r = verdict("reference-cuda", 3.0);
  Blame b = only(blame({&e, &r}));
  EXPECT_EQ(b.guilty, "reference");
  EXPECT_EQ(b.line, "reference-cuda 3x bound, subject 0.5x: reference-cuda out of line");
}

TEST(Blame, CompiledOutOfLineAgainstEager) {
  OracleVerdict e = verdict("eager", 0.2), c = verdict("compiled", 5.1);
  Blame b = only(blame({&e, &c}));
  EXPECT_EQ(b.against, "eager");
  EXPECT_EQ(b.guilty, "compiled");
  EXPECT_EQ(b.line, "compiled 5.1x bound, eager 0.2x: compiled out of line (torch.compile side)");
}

TEST(Blame, CompiledAndEagerBothOutBlameTheImplementation) {
  OracleVerdict e = verdict("eager", 4.0), c = verdict("compiled", 5.1);
  auto bs = blame({&e, &c});
  ASSERT_EQ(bs.size(), 2u);
  EXPECT_EQ(bs[0].oracle, "eager");
  EXPECT_EQ(bs[0].guilty, "unknown");  // no reference ran: eager alone cannot be placed
  EXPECT_EQ(bs[0].line, "subject 4x bound; reference-cuda did not run: side unknown");
  EXPECT_EQ(bs[1].guilty, "implementation");
  EXPECT_EQ(bs[1].line, "compiled 5.1x bound, eager 4x: both out: the implementation, not the compiler");
}

TEST(Blame, OtherSideWithAnotherFindingIsNamedNotMeasured) {
  OracleVerdict e = verdict("eager", 0.2), c = verdict("compiled", 2.0);
  e.outputs[1].finding = Flaw::NONFINITE;
  Blame b = only(blame({&e, &c}));
  EXPECT_EQ(b.against_finding, "nonfinite");
  EXPECT_EQ(b.guilty, "implementation");
  EXPECT_EQ(b.line, "compiled 2x bound, eager nonfinite: both out: the implementation, not the compiler");
}

TEST(Blame, CompiledWithoutEagerIsUnknownAndPassingOutputsHaveNone) {
  OracleVerdict c = verdict("compiled", 2.0), ok = verdict("eager", 0.9);
  Blame b = only(blame({&c}));
  EXPECT_EQ(b.guilty, "unknown");
  EXPECT_FALSE(b.against_ran);
  EXPECT_TRUE(blame({&ok}).empty());
}

namespace {

// Golden outputs with grad_weight pushed to `factor` times its bound, per mode.
struct FakeRunner : SubjectRunner {
  std::map<std::string, double> factor;  // mode -> err/bound of grad_weight (0: exact)
  SubjectResult run(const Case& c, const Inputs& in, const std::string&, const std::string& mode,
                    const std::optional<Backend>&, const std::string&) override {
    SubjectResult r;
    r.status = SubjectStatus::OK;
    r.outputs = push(c, in, factor[mode]);
    r.subject_version = "fake";
    return r;
  }
  static Outputs push(const Case& c, const Inputs& in, double f) {
    Outputs o = golden(c, in);
    const Bounds b = compute_bounds(c, in);
    auto& gw = o.at("grad_weight").data;
    for (size_t k = 0; k < gw.size(); ++k) gw[k] += f * b.elem.at("grad_weight").data[k];
    return o;
  }
  std::string torch_version() override { return "2.13.0"; }
  Environment environment() override { return {}; }
};

Case fp32_case() {
  Case c = example_case();
  c.input_dtype = c.weight_dtype = DType::F32;
  return c;
}

}  // namespace

TEST(Blame, RunCaseNamesTheSubjectAgainstAFakeReferenceInTableAndJson) {
  FakeRunner fr;
  fr.factor = {{"eager", 2.0}, {"compiled", 2.0}};
  RunOptions opt;
  opt.runner = &fr;
  opt.ladder = false;
  const Case c = fp32_case();
  opt.extra_oracles.push_back({"reference-cuda", [&](const Case& cc) -> std::optional<Outputs> {
                                 return FakeRunner::push(cc, make_inputs(cc), 0.25);
                               }});
  RunReport rep = run_case(c, opt);
  EXPECT_EQ(rep.outcome, "judge:grad_weight:out-of-bounds@eager");
  ASSERT_EQ(rep.blames.size(), 2u);
  EXPECT_EQ(rep.blames[0].guilty, "subject");
  EXPECT_NEAR(rep.blames[0].ratio, 2.0, 1e-6);
  EXPECT_NEAR(rep.blames[0].against_ratio, 0.25, 1e-6);
  EXPECT_EQ(rep.blames[1].guilty, "implementation");  // compiled agrees with eager: not the compiler
  auto j = report_json(rep);
  const auto& out = j["oracles"][0]["outputs"];
  bool seen = false;
  for (auto& v : out)
    if (v["output"] == "grad_weight") {
      seen = true;
      EXPECT_EQ(v["guilty"], "subject");
      EXPECT_NEAR(v["err_over_bound_by_oracle"]["eager"].get<double>(), 2.0, 1e-6);
      EXPECT_NEAR(v["err_over_bound_by_oracle"]["reference-cuda"].get<double>(), 0.25, 1e-6);
      EXPECT_EQ(v["verdict"], "subject 2x bound, reference-cuda 0.25x: subject out of line");
    } else {
      EXPECT_FALSE(v.contains("guilty")) << v.dump();
    }
  EXPECT_TRUE(seen);
  const std::string t = report_table(rep);
  EXPECT_NE(t.find("verdict eager grad_weight: subject 2x bound, reference-cuda 0.25x: subject out of line"), std::string::npos) << t;
  EXPECT_NE(t.find("verdict compiled grad_weight: compiled 2x bound, eager 2x: both out"), std::string::npos) << t;
}

TEST(Blame, RunCaseNamesCompiledWhenEagerIsInBoundsAndNoReferenceRan) {
  FakeRunner fr;
  fr.factor = {{"eager", 0.0}, {"compiled", 3.0}};
  RunOptions opt;
  opt.runner = &fr;
  opt.ladder = false;
  RunReport rep = run_case(fp32_case(), opt);
  EXPECT_EQ(rep.outcome, "judge:grad_weight:out-of-bounds@compiled");
  Blame b = only(rep.blames);
  EXPECT_EQ(b.guilty, "compiled");
  EXPECT_NEAR(b.ratio, 3.0, 1e-6);
  auto j = report_json(rep);
  for (auto& v : j["oracles"][1]["outputs"])
    if (v["output"] == "grad_weight") {
      EXPECT_EQ(v["guilty"], "compiled");
      EXPECT_NEAR(v["err_over_bound_by_oracle"]["eager"].get<double>(), 0.0, 1e-9);
    }
}

TEST(Blame, RunCaseWithTheReferenceNotRunningSaysSideUnknown) {
  FakeRunner fr;
  fr.factor = {{"eager", 2.0}};
  RunOptions opt;
  opt.runner = &fr;
  opt.compiled = false;
  opt.extra_oracles.push_back({"reference-cuda", [](const Case&) -> std::optional<Outputs> { return std::nullopt; }});
  RunReport rep = run_case(fp32_case(), opt);
  Blame b = only(rep.blames);
  EXPECT_EQ(b.guilty, "unknown");
  auto j = report_json(rep);
  for (auto& v : j["oracles"][0]["outputs"])
    if (v["output"] == "grad_weight") {
      EXPECT_TRUE(v["err_over_bound_by_oracle"]["reference-cuda"].is_null());
    }
}
