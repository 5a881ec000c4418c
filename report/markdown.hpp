// report.md: Markdown of a report's blocks (report/document.hpp). Blocks are separated by
// one blank line; table cells, list items and headings are kept on one line.
#pragma once
#include <string>
#include <string_view>

#include "report/document.hpp"

namespace flce {

std::string render_markdown(const Markdown& doc);
std::string render_markdown(const Table& table);

// A table cell as written: line breaks and '|' become spaces (a '|' would end the cell).
std::string markdown_cell(std::string_view text);
// "`text`": an inline code span.
std::string md_code(std::string_view text);

}  // namespace flce
