// Python source text for the short reproducer (short_repro.hpp): lines of at most 120 columns
// (the project's ruff line length), literals, wrapped lists and calls, comments. Text taken
// from a case or a path only ever enters through a literal (py_string_literal) or tame().
#pragma once
#include <string>
#include <vector>

#include "case/dtype.hpp"

namespace flce::py {

inline constexpr size_t kWidth = 120;

std::string lit(const std::string& text);               // py_string_literal (emit_python.hpp)
std::string float_lit(double d);                         // "1.5", "0.1", "1e-07"; float("inf"/"nan")
std::string list_of(const std::vector<std::string>& items);  // "[a, b]" on one line
std::string torch_dtype(DType d);                            // "torch.bfloat16", "torch.float16", "torch.float32"

// Words of `text` as comment lines ("# ...") of at most kWidth columns.
std::vector<std::string> comment(const std::string& text);
// A file's name for a comment: letters, digits and . _ - + only (nothing can end the comment).
std::string tame(const std::string& path);
// A string literal at `indent` columns, split into adjacent literals, one a line, when long.
std::string split_literal(const std::string& text, size_t indent);

// `head[a, b, ...]tail` (or other brackets) on one line when the last line of head allows,
// else the items wrapped in lines indented by `indent`, the bracket closing the last one.
std::string wrapped(const std::string& head, const std::vector<std::string>& items, const std::string& tail,
                    size_t indent, const std::string& open = "[", const std::string& close = "]");
// `head(args)` for a line indented by `indent`, or its arguments on continuation lines.
std::string call(const std::string& head, const std::vector<std::string>& args, size_t indent);

// Lines of a script; text added may hold several lines.
struct Lines {
  std::vector<std::string> lines;
  void add(const std::string& text);
  void add(const std::vector<std::string>& many);
  void blank(int n = 1);
  std::string text() const;
};

}  // namespace flce::py
