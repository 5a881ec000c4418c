// report/: the document model's Markdown and JUnit renderers and the durable writes. Linked
// against flce_report alone, so the room stands without the rest of flce.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/document.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"
#include "report/xml_escape.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

TEST(Markdown, TableCellsStayOnOneLineAndInTheirColumn) {
  Table t{{"signature", "detail"}, {}};
  t.row({"`a|b`", "line one\nline two\r\nend"});
  EXPECT_EQ(render_markdown(t),
            "| signature | detail |\n"
            "|---|---|\n"
            "| `a b` | line one line two  end |\n");
}

TEST(Markdown, EmptyCellsAndShortRows) {
  Table t{{"", ""}, {}};
  t.row({"cases run", "3"});
  t.row({"note"});  // padded to the columns
  EXPECT_EQ(render_markdown(t), "| | |\n|---|---|\n| cases run | 3 |\n| note | |\n");
}

TEST(Markdown, BlocksAreSeparatedByOneBlankLine) {
  Markdown md;
  md.heading(2, "flce gate: ✅ no regressions").paragraph("3 cases · 1 s");
  md.add(Table{{"case", "verdict"}, {{"`a`", "same-pass"}}});
  md.add(List{});  // empty: no block, no gap
  md.add(List{{"first\nsecond", "a | b"}});
  md.add(Details{"Unchanged", Table{{"case"}, {{"`b`"}}}});
  EXPECT_EQ(render_markdown(md),
            "## flce gate: ✅ no regressions\n"
            "\n"
            "3 cases · 1 s\n"
            "\n"
            "| case | verdict |\n|---|---|\n| `a` | same-pass |\n"
            "\n"
            "- first second\n"
            "- a | b\n"  // a pipe means nothing in a list item
            "\n"
            "<details><summary>Unchanged</summary>\n\n| case |\n|---|\n| `b` |\n\n</details>\n");
}

TEST(Markdown, CodeBlockFenceOutlastsBackticksInside) {
  Markdown md;
  md.add(CodeBlock{"python", "print('REPRODUCED')"});  // a final newline is added
  md.add(CodeBlock{"text", "a ``` b\n````\n"});         // the fence is one longer than any run
  EXPECT_EQ(render_markdown(md),
            "```python\nprint('REPRODUCED')\n```\n"
            "\n"
            "`````text\na ``` b\n````\n`````\n");
}

TEST(Markdown, EmptyDocumentIsEmpty) {
  EXPECT_EQ(render_markdown(Markdown{}), "");
  EXPECT_EQ(markdown_cell("a|b\nc"), "a b c");
  EXPECT_EQ(md_code("x"), "`x`");
}

JUnit sample_junit() {
  JUnitSuite s{"flce.campaign.<model>", 12.3456, {}};
  s.cases.push_back({s.name, "pass", std::nullopt, JUnitPass{"30 cases passed"}});
  s.cases.push_back({s.name, "unsupported", std::nullopt, JUnitSkipped{"3 cases \"cannot\" run here"}});
  s.cases.push_back({s.name, "crash:SIGSEGV@eager", 1.5, JUnitFailure{"finding", "2 hits & more", "a < b\nrepro: x"}});
  s.cases.push_back({s.name, "tier2@compiled", std::nullopt, JUnitFailure{"finding", "1 hit", ""}});
  return {{s}};
}

TEST(JUnit, CountsComeFromTheCases) {
  std::string x = render_junit(sample_junit());
  EXPECT_NE(x.find("<testsuite name=\"flce.campaign.&lt;model&gt;\" tests=\"4\" failures=\"2\" skipped=\"1\" "
                   "time=\"12.346\">"),
            std::string::npos)
      << x;
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", 0), 0u);
  EXPECT_NE(x.find("</testsuite>\n</testsuites>\n"), std::string::npos);
}

TEST(JUnit, EveryNameMessageAndBodyIsEscaped) {
  std::string x = render_junit(sample_junit());
  EXPECT_NE(x.find("<testcase classname=\"flce.campaign.&lt;model&gt;\" name=\"pass\"><system-out>30 cases "
                   "passed</system-out></testcase>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"unsupported\"><skipped message=\"3 cases &quot;cannot&quot; run here\"/></testcase>"),
            std::string::npos);
  EXPECT_NE(x.find("name=\"crash:SIGSEGV@eager\" time=\"1.500\"><failure type=\"finding\" message=\"2 hits &amp; "
                   "more\">a &lt; b\nrepro: x</failure></testcase>"),
            std::string::npos)
      << x;
  EXPECT_EQ(x.find("<model>"), std::string::npos);
  EXPECT_EQ(xml_escape("a\x01'b"), "a &apos;b");  // control characters are not XML, even escaped
}

TEST(JUnit, EmptySuiteAndNoSuites) {
  EXPECT_EQ(render_junit(JUnit{{JUnitSuite{"s", 0, {}}}}),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "  <testsuite name=\"s\" tests=\"0\" failures=\"0\" skipped=\"0\" time=\"0.000\">\n"
            "  </testsuite>\n</testsuites>\n");
  EXPECT_EQ(render_junit(JUnit{}), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n</testsuites>\n");
}

// A private directory per test, removed afterwards.
class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "flce-report-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir = t;
  }
  void TearDown() override { fs::remove_all(dir); }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir;
};

TEST_F(Files, WriteAtomicReplacesTheFileAndLeavesNoTemp) {
  write_atomic(dir / "state.json", "old\n");
  write_atomic(dir / "state.json", std::string(100000, 'x'));
  EXPECT_EQ(read(dir / "state.json"), std::string(100000, 'x'));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
}

TEST_F(Files, WriteAtomicNamesWhatFailedAndKeepsTheOldFile) {
  try {
    write_atomic(dir / "missing" / "report.md", "x");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create " + (dir / "missing" / "report.md").string() + ".tmp."),
              std::string::npos)
        << e.what();
  }
  // Renaming onto a directory fails: the old contents stay and the temp file goes.
  fs::create_directory(dir / "taken");
  write_atomic(dir / "taken" / "keep", "kept");
  EXPECT_THROW(write_atomic(dir / "taken", "x"), std::runtime_error);
  EXPECT_EQ(read(dir / "taken" / "keep"), "kept");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
}

TEST_F(Files, WriteReportWritesTheViewsItHasUnderTheNamesAsked) {
  Report r;
  r.markdown.paragraph("No findings.");
  r.json = nlohmann::ordered_json{{"b", 1}, {"a", 2}};
  r.junit = sample_junit();
  write_report(dir, r);
  EXPECT_EQ(read(dir / "report.md"), "No findings.\n");
  EXPECT_EQ(read(dir / "report.json"), "{\n  \"b\": 1,\n  \"a\": 2\n}\n");
  EXPECT_EQ(read(dir / "junit.xml"), render_junit(r.junit));

  fs::create_directory(dir / "gate");
  write_report(dir / "gate", r, {"gate.md", "gate.json", ""});  // no JUnit asked for
  EXPECT_TRUE(fs::exists(dir / "gate" / "gate.md"));
  EXPECT_TRUE(fs::exists(dir / "gate" / "gate.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "gate"), fs::directory_iterator{}), 2);

  fs::create_directory(dir / "md-only");
  Report md_only;
  md_only.markdown.heading(1, "t");
  write_report(dir / "md-only", md_only);  // no JSON, no suites: only report.md
  EXPECT_EQ(read(dir / "md-only" / "report.md"), "# t\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "md-only"), fs::directory_iterator{}), 1);
}

}  // namespace
}  // namespace flce
