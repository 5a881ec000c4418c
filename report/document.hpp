// What a report says, apart from how it is written: Markdown blocks (headings, paragraphs,
// tables, lists, a collapsed table, fenced code), JUnit suites of test cases, and a JSON payload. The
// campaign, gate and matrix build one of these; report/markdown.hpp, report/junit.hpp and
// report/write.hpp turn it into report.md, junit.xml and report.json.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace flce {

// ---------------------------------------------------------------- Markdown

struct Heading {
  int level = 1;  // "#" .. "######"
  std::string text;
};

struct Paragraph {
  std::string text;  // written as given (inline Markdown allowed)
};

// A pipe table. Cells are inline Markdown; the renderer keeps each on one line and out of
// the column structure (a '|' or a line break in a cell becomes a space).
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as long as `columns`
  Table& row(std::vector<std::string> cells) {
    rows.push_back(std::move(cells));
    return *this;
  }
};

// A bulleted list; each item is kept on one line.
struct List {
  std::vector<std::string> items;
};

// A table folded away under a summary line (<details>, as GitHub renders it).
struct Details {
  std::string summary;
  Table table;
};

// A fenced code block, written verbatim (a fence longer than any backtick run inside it).
struct CodeBlock {
  std::string language;  // the info string ("python", "text"); may be empty
  std::string text;
};

using Block = std::variant<Heading, Paragraph, Table, List, Details, CodeBlock>;

// The blocks of one Markdown page, in order.
struct Markdown {
  std::vector<Block> blocks;
  Markdown& heading(int level, std::string text) { return add(Heading{level, std::move(text)}); }
  Markdown& paragraph(std::string text) { return add(Paragraph{std::move(text)}); }
  template <class B>  // one of Block's alternatives
  Markdown& add(B block) {
    blocks.emplace_back(std::in_place_type<B>, std::move(block));
    return *this;
  }
  bool empty() const { return blocks.empty(); }
};

// ---------------------------------------------------------------- JUnit

struct JUnitPass {
  std::string system_out;  // <system-out>, when not empty
};
struct JUnitFailure {
  std::string type, message, body;
};
struct JUnitSkipped {
  std::string message;
};

struct JUnitCase {
  std::string classname, name;
  std::optional<double> time_s;  // the time attribute, when known
  std::variant<JUnitPass, JUnitFailure, JUnitSkipped> result;
  bool failed() const { return std::holds_alternative<JUnitFailure>(result); }
  bool skipped() const { return std::holds_alternative<JUnitSkipped>(result); }
};

// tests / failures / skipped are counted from the cases when written.
struct JUnitSuite {
  std::string name;
  double time_s = 0;
  std::vector<JUnitCase> cases;
};

struct JUnit {
  std::vector<JUnitSuite> suites;
  bool empty() const { return suites.empty(); }
};

// ---------------------------------------------------------------- the report

// The three views of one result; each is written only when present (report/write.hpp).
struct Report {
  Markdown markdown;                         // report.md
  std::optional<nlohmann::ordered_json> json;  // report.json
  JUnit junit;                               // junit.xml
};

}  // namespace flce
