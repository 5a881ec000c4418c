// One root cause, one finding (fuzz/findings/root_cause.hpp): what is grouped and, as much,
// what never is.
#include "fuzz/findings/root_cause.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/campaign/campaign_report.hpp"
#include "fuzz/findings/cause.hpp"

namespace flce {
namespace {

Finding ablated(const std::string& id, const std::string& outcome, std::vector<std::string> essential, double seen_s) {
  Finding f;
  f.id = id;
  f.signature = outcome;
  const auto c = failure_class(outcome);
  f.failure = c ? c->key : "";
  f.cause_status = CauseStatus::ABLATED;
  f.essential = essential;
  f.cause = cause_key(f.failure, essential);
  f.first_seen_s = seen_s;
  return f;
}

Finding order_dependent(const std::string& id, const std::string& outcome) {
  Finding f;
  f.id = id;
  f.signature = outcome;
  f.cause_status = CauseStatus::NOT_RUN;
  f.cause_note = "the case alone in a fresh worker gives pass: it depends on what ran before it";
  return f;
}

std::optional<Case> no_case(const Finding&) { return std::nullopt; }

const Finding& by(const std::vector<Finding>& fs, const std::string& id) {
  for (auto& f : fs)
    if (f.id == id) return f;
  throw std::runtime_error("no finding " + id);
}

// Liger main compiled, every target ignored (the H100 night of 2026-12-06): the nonfinite gradient
// and the reduction=none out-of-bounds loss are one defect; the sum/confident one has no class
// weights, so it is not shown to be the same and stays its own finding.
TEST(RootCause, ASymptomOfAnotherClassWithMoreFeaturesGoesUnderTheRoot) {
  std::vector<Finding> fs{
      ablated("oob-none", "judge:loss:out-of-bounds@compiled", {"ce_weight", "ignore_fraction=all", "reduction=none"}, 1),
      ablated("nonfinite", "judge:grad_input:nonfinite@compiled", {"ce_weight", "ignore_fraction=all"}, 2),
      ablated("oob-sum", "judge:loss:out-of-bounds@compiled", {"ignore_fraction=all", "reduction=sum", "regime=confident"}, 3)};
  group_root_causes(fs, no_case);
  EXPECT_EQ(by(fs, "oob-none").root, "nonfinite");
  EXPECT_NE(by(fs, "oob-none").root_why.find("superset"), std::string::npos) << by(fs, "oob-none").root_why;
  EXPECT_TRUE(by(fs, "nonfinite").root.empty());
  EXPECT_TRUE(by(fs, "oob-sum").root.empty());
  EXPECT_TRUE(by(fs, "nonfinite").is_new());
  EXPECT_FALSE(by(fs, "oob-none").is_new());
}

TEST(RootCause, NeverMergesTwoCauses) {
  // The planted two-cause subject: one class, two features, on one output: two bugs.
  std::vector<Finding> fs{ablated("a", "judge:grad_weight:out-of-bounds@eager", {"softcap"}, 1),
                          ablated("b", "judge:grad_weight:out-of-bounds@eager", {"label_smoothing", "softcap"}, 2)};
  group_root_causes(fs, no_case);
  EXPECT_TRUE(fs[0].root.empty());
  EXPECT_TRUE(fs[1].root.empty()) << "one class: the ablation already says these are two causes";
  // Another oracle, disjoint features, no features, a trace-time signature: apart.
  std::vector<Finding> gs{ablated("e", "judge:loss:nonfinite@eager", {"softcap"}, 1),
                          ablated("c", "judge:loss:out-of-bounds@compiled", {"softcap"}, 2),
                          ablated("d", "judge:loss:out-of-bounds@eager", {"ce_weight"}, 3),
                          ablated("z", "judge:loss:out-of-bounds@eager", {}, 4),
                          ablated("t", "tier1-decomposition@compiled:aot_eager", {"softcap"}, 5),
                          ablated("u", "judge:loss:nonfinite@compiled", {"softcap", "reduction=sum"}, 6)};
  group_root_causes(gs, no_case);
  for (auto& f : gs) {
    if (f.id == "u") continue;
    EXPECT_TRUE(f.root.empty()) << f.id << ": " << f.root_why;
  }
  EXPECT_EQ(by(gs, "u").root, "c") << "compiled nonfinite [reduction=sum,softcap] under compiled out-of-bounds [softcap]";
  EXPECT_TRUE(by(gs, "t").root.empty()) << "a trace-time signature names its own bug";
}

TEST(RootCause, AKnownDefectNeverHidesANewOne) {
  Finding known = ablated("k", "cuda-illegal-memory-access@compiled:inductor", {"ce_weight", "ignore_fraction=all"}, 1);
  known.known = "corpus/expectations.json: cases/x.json";
  // Equal features, another class: one defect, filed under the known one.
  Finding same = ablated("s", "judge:grad_input:nonfinite@compiled", {"ce_weight", "ignore_fraction=all"}, 2);
  // More features: not shown to be the known defect; stays new.
  Finding more = ablated("m", "judge:loss:out-of-bounds@compiled", {"ce_weight", "ignore_fraction=all", "reduction=none"}, 3);
  // A known finding is never a symptom of a new one.
  Finding root = ablated("r", "judge:loss:prediction@compiled", {"ce_weight"}, 0);
  std::vector<Finding> fs{known, same, more, root};
  group_root_causes(fs, no_case);
  EXPECT_EQ(by(fs, "s").root, "k");
  EXPECT_TRUE(by(fs, "k").root.empty());
  EXPECT_TRUE(by(fs, "k").known.size());
  EXPECT_EQ(by(fs, "m").root, "r") << "under the new root whose features it carries, not the known one";
  // Without the new root it stays new.
  std::vector<Finding> gs{known, more};
  group_root_causes(gs, no_case);
  EXPECT_TRUE(by(gs, "m").is_new());
}

TEST(RootCause, AnOrderDependentVariantGoesUnderTheFindingItVaries) {
  Case c;
  c.ce_weight = true;
  c.ignore_fraction = 1;
  c.reduction = Reduction::SUM;
  Case other;  // carries none of the root's features
  std::vector<Finding> fs{ablated("root", "judge:loss:out-of-bounds@compiled", {"ce_weight", "ignore_fraction=all"}, 1),
                          ablated("wide", "judge:grad_weight:out-of-bounds@compiled", {"ce_weight"}, 2),
                          order_dependent("v", "judge:loss:out-of-bounds@compiled"),
                          order_dependent("w", "judge:loss:out-of-bounds@compiled"),
                          order_dependent("e", "judge:loss:out-of-bounds@eager")};
  auto case_of = [&](const Finding& f) -> std::optional<Case> { return f.id == "w" ? other : c; };
  group_root_causes(fs, case_of);
  EXPECT_EQ(by(fs, "v").root, "root") << "the most specific of its class: " << by(fs, "v").root_why;
  EXPECT_TRUE(by(fs, "wide").root.empty()) << "one class: two causes";
  EXPECT_NE(by(fs, "v").root_why.find("order-dependent"), std::string::npos);
  EXPECT_TRUE(by(fs, "w").root.empty()) << "its case does not carry the features";
  EXPECT_TRUE(by(fs, "e").root.empty()) << "another oracle";
  // Under a known finding only when it is of that finding's class.
  std::vector<Finding> ks{ablated("k", "judge:loss:nonfinite@compiled", {"ce_weight"}, 1),
                          order_dependent("v", "judge:loss:out-of-bounds@compiled")};
  ks[0].known = "store s.db: k";
  group_root_causes(ks, case_of);
  EXPECT_TRUE(by(ks, "v").root.empty()) << by(ks, "v").root_why;
  ks[0].signature = "judge:loss:out-of-bounds@compiled";
  group_root_causes(ks, case_of);
  EXPECT_EQ(by(ks, "v").root, "k");
  // Grouping again (a resume) starts over: nothing left from before.
  fs[2].cause_note = "budget";
  group_root_causes(fs, case_of);
  EXPECT_TRUE(by(fs, "v").root.empty());
  EXPECT_TRUE(by(fs, "v").root_why.empty());
}

TEST(RootCause, TheGroupingSurvivesTheFindingsJson) {
  Finding f = ablated("s", "judge:loss:nonfinite@compiled", {"softcap"}, 1);
  f.root = "r", f.root_why = "why";
  const Finding g = Finding::from_json(nlohmann::json::parse(f.to_json().dump()));
  EXPECT_EQ(g.root, "r");
  EXPECT_EQ(g.root_why, "why");
  EXPECT_FALSE(g.is_new());
}

// report.md counts a symptom once, under its root, as report.json and the summary line do (on the
// H100 night of 2026-12-08 its findings row said "2 new" where the night header said 1).
TEST(RootCause, TheReportCountsASymptomOnlyUnderItsRoot) {
  CampaignState st;
  st.subject = "model";
  st.findings = {
      ablated("oob-none", "judge:loss:out-of-bounds@compiled", {"ce_weight", "ignore_fraction=all", "reduction=none"}, 1),
      ablated("nonfinite", "judge:grad_input:nonfinite@compiled", {"ce_weight", "ignore_fraction=all"}, 2),
      ablated("oob-sum", "judge:grad_input:out-of-bounds@compiled", {"ignore_fraction=all", "reduction=sum"}, 3)};
  group_root_causes(st.findings, no_case);
  ASSERT_EQ(by(st.findings, "oob-none").root, "nonfinite");
  RunStats rs;
  rs.known = {"expectations.json"};
  const auto dir = std::filesystem::temp_directory_path() / ("flce-root-report-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_reports(dir, st, rs);
  std::stringstream md, js;
  md << std::ifstream(dir / "report.md").rdbuf();
  js << std::ifstream(dir / "report.json").rdbuf();
  std::filesystem::remove_all(dir);
  EXPECT_NE(md.str().find("| findings | **2 new**, 0 known (one per cause, 1 more listed under a root) |"),
            std::string::npos)
      << md.str();
  const auto j = nlohmann::json::parse(js.str());
  EXPECT_EQ(j["new_findings"], 2);
  EXPECT_EQ(j["under_a_root"], 1);
}

}  // namespace
}  // namespace flce
