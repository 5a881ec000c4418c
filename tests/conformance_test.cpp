// flce conformance's table builder (fuzz/campaign/conformance.hpp) on hand-made campaign
// directories: every cell filled, contract limits as unsupported, findings by id, and the
// implementation-vs-implementation comparison with the sum of the two bounds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "fuzz/campaign/conformance.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const json kCells = {"kind=flce", "dtypes=bf16/bf16", "reduction=mean", "ignore=none", "device=cpu"};

json line(const std::string& key, const std::string& outcome, const std::string& input, json loss, json extra = {}) {
  json cells = kCells;
  for (auto& c : extra) cells.push_back(c);
  return {{"key", key}, {"outcome", outcome}, {"input", input}, {"loss", {{"eager", loss}}}, {"cells", cells}};
}

void write_campaign(const fs::path& dir, const json& caps, const json& findings, const std::vector<json>& lines) {
  fs::create_directories(dir);
  std::ofstream(dir / "report.json") << json{{"capabilities", caps}, {"findings", findings}}.dump();
  std::ofstream j(dir / "cases.jsonl");
  for (auto& l : lines) j << l.dump() << "\n";
}

struct ConformanceTable : ::testing::Test {
  fs::path root = fs::temp_directory_path() / ("flce_conformance_test_" + std::to_string(::getpid()));
  nlohmann::ordered_json t;

  void SetUp() override {
    fs::remove_all(root);
    const char* oob = "judge:grad_input:out-of-bounds@eager";
    write_campaign(root / "a", {{"contract", {{"semantics", "liger"}}}, {"lacks", json::array()}},
                   {{{"id", "oob-1"}, {"signature", oob}}},
                   {line("k0", "pass", "h0", {{"got", 1.0}, {"bound", 0.01}}, {"bias=on"}),
                    line("k1", oob, "h1", {{"got", 1.5}, {"bound", 0.1}}),
                    line("k2", "pass", "h2", {{"got", 0.0}, {"bound", 0.0}}),
                    line("k3", "pass", "h3", {{"got", 1.0}, {"bound", 0.1}}, {"softcap=on"})});
    write_campaign(root / "b",
                   {{"contract", {{"semantics", "torch-fp32"}, {"params", {"ignore_index", "reduction", "softcap"}}}},
                    {"lacks", {"bias", "ce_weight"}}},
                   json::array(),
                   {line("k0", "pass", "h0-nobias", {{"got", 9.0}, {"bound", 0.01}}),
                    line("k1", "pass", "h1", {{"got", 1.75}, {"bound", 0.1}}),
                    line("k2", "pass", "h2", {{"got", "nan"}, {"bound", 0.0}}),
                    line("k3", "unsupported", "h3", {{"got", nullptr}, {"bound", nullptr}}, {"softcap=on"})});
    t = flce::conformance_table({{"a", root / "a", 1, ""}, {"b", root / "b", 0, ""}, {"c", root / "c", 2, "unusable"}},
                                7);
  }
  void TearDown() override { fs::remove_all(root); }

  const nlohmann::ordered_json& cell(const std::string& row, const std::string& subject) {
    for (auto& r : t["rows"])
      if (r["cell"] == row) return r["cells"][subject];
    throw std::runtime_error("no row " + row);
  }
};

TEST_F(ConformanceTable, EveryCellFilled) {
  ASSERT_GT(t["rows"].size(), 40u);
  for (auto& r : t["rows"])
    for (const char* s : {"a", "b", "c"}) {
      ASSERT_TRUE(r["cells"].contains(s)) << r["cell"];
      EXPECT_FALSE(r["cells"][s]["text"].get<std::string>().empty()) << r["cell"] << " " << s;
    }
  EXPECT_EQ(cell("device=cuda", "a")["kind"], "not_sampled");
  EXPECT_EQ(cell("device=cuda", "a")["text"], "not sampled");
  EXPECT_EQ(cell("device=cpu", "c")["kind"], "not_run");
  // The lane is a row too: a line naming none ran in the compiled lane.
  EXPECT_EQ(cell("lane=compiled", "b")["text"], "pass (3 cases); unsupported (its supports() refused the case; 1 case)");
  EXPECT_EQ(cell("lane=eager", "b")["kind"], "not_sampled");
}

TEST_F(ConformanceTable, ContractLimitIsUnsupportedWithWhy) {
  EXPECT_EQ(cell("bias=on", "a")["text"], "pass (1 case)");
  const auto& b = cell("bias=on", "b");
  EXPECT_EQ(b["kind"], "unsupported");
  EXPECT_NE(b["text"].get<std::string>().find("no bias"), std::string::npos) << b["text"];
  EXPECT_EQ(cell("ce_weight=on", "b")["kind"], "unsupported");
  // In its params, refused by its supports(): unsupported, and not a disagreement with a's pass.
  EXPECT_EQ(cell("softcap=on", "b")["kind"], "unsupported");
  EXPECT_EQ(cell("softcap=on", "b")["text"], "unsupported (its supports() refused the case; 1 case)");
  EXPECT_EQ(cell("softcap=on", "a")["text"], "pass (1 case)");
}

TEST_F(ConformanceTable, FindingsByIdWithCounts) {
  const auto& a = cell("kind=flce", "a");
  EXPECT_EQ(a["kind"], "finding");
  EXPECT_EQ(a["findings"]["oob-1"], 1);
  EXPECT_EQ(a["text"], "oob-1 (1 case); pass (3 cases)");
  EXPECT_EQ(cell("kind=flce", "b")["text"], "pass (3 cases); unsupported (its supports() refused the case; 1 case)");
}

TEST_F(ConformanceTable, PairsComparedOnSameInputsWithSummedBounds) {
  ASSERT_EQ(t["comparisons"].size(), 1u);  // c did not run
  const auto& c = t["comparisons"][0];
  EXPECT_EQ(c["common_keys"], 4);
  EXPECT_EQ(c["same_inputs"], 3);  // k0: b's contract dropped the bias
  EXPECT_EQ(c["contract_differences"], 1);  // k3: a passed, b's supports() refused it
  ASSERT_EQ(c["loss_disagreements"].size(), 2u);
  EXPECT_EQ(c["loss_disagreements"][0]["key"], "k1");  // |1.5 - 1.75| > 0.1 + 0.1 (but not twice that)
  EXPECT_DOUBLE_EQ(c["loss_disagreements"][0]["bound"].get<double>(), 0.2);
  EXPECT_EQ(c["loss_disagreements"][1]["key"], "k2");  // NaN against 0
  ASSERT_EQ(c["outcome_disagreements"].size(), 1u);
  EXPECT_EQ(c["outcome_disagreements"][0]["key"], "k1");
}

TEST_F(ConformanceTable, WithinTheSummedBoundsNoDisagreement) {
  write_campaign(root / "d", {{"lacks", json::array()}}, json::array(),
                 {line("k1", "pass", "h1", {{"got", 1.65}, {"bound", 0.1}})});  // |1.5 - 1.65| <= 0.2
  auto t2 = flce::conformance_table({{"a", root / "a", 1, ""}, {"d", root / "d", 0, ""}}, 7);
  EXPECT_TRUE(t2["comparisons"][0]["loss_disagreements"].empty());
  const std::string md = flce::conformance_markdown(t2);
  EXPECT_NE(md.find("| feature | a | d |"), std::string::npos);
  EXPECT_NE(md.find("bound_a + bound_b"), std::string::npos);
}

}  // namespace
