#include "report/markdown.hpp"

#include <algorithm>

namespace flce {

namespace {

// One line: a line break would end a list item or a heading (or a table row).
std::string one_line(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string table_line(const std::vector<std::string>& cells, size_t width) {
  std::string s = "|";
  for (size_t i = 0; i < std::max(width, cells.size()); ++i) {
    const std::string c = i < cells.size() ? markdown_cell(cells[i]) : "";
    s += c.empty() ? " |" : " " + c + " |";
  }
  return s + "\n";
}

std::string render(const Heading& h) { return std::string(std::max(1, h.level), '#') + " " + one_line(h.text) + "\n"; }
std::string render(const Paragraph& p) { return p.text + "\n"; }
std::string render(const Table& t) { return render_markdown(t); }

std::string render(const List& l) {
  std::string s;
  for (auto& item : l.items) s += "- " + one_line(item) + "\n";
  return s;
}

std::string render(const Details& d) {
  return "<details><summary>" + one_line(d.summary) + "</summary>\n\n" + render_markdown(d.table) + "\n</details>\n";
}

// The fence is one backtick longer than the longest run of backticks in the text (at least
// three), so no line of the code can close it early.
std::string render(const CodeBlock& c) {
  size_t longest = 0, run = 0;
  for (char ch : c.text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string body = c.text;
  if (body.empty() || body.back() != '\n') body += "\n";
  return fence + one_line(c.language) + "\n" + body + fence + "\n";
}

}  // namespace

std::string markdown_cell(std::string_view text) {
  std::string s = one_line(text);
  for (char& c : s)
    if (c == '|') c = ' ';
  return s;
}

std::string md_code(std::string_view text) { return "`" + std::string(text) + "`"; }

std::string render_markdown(const Table& t) {
  std::string s = table_line(t.columns, t.columns.size()) + "|";
  for (size_t i = 0; i < t.columns.size(); ++i) s += "---|";
  s += "\n";
  for (auto& r : t.rows) s += table_line(r, t.columns.size());
  return s;
}

std::string render_markdown(const Markdown& doc) {
  std::string s;
  for (auto& b : doc.blocks) {
    std::string text = std::visit([](auto& x) { return render(x); }, b);
    if (text.empty()) continue;  // an empty list leaves no gap either
    if (!s.empty()) s += "\n";
    s += text;
  }
  return s;
}

}  // namespace flce
