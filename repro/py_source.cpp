#include "repro/py_source.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>

#include "repro/emit_python.hpp"

namespace flce::py {

std::string lit(const std::string& text) { return py_string_literal(text); }

std::string float_lit(double d) {
  if (std::isnan(d)) return "float(\"nan\")";
  if (std::isinf(d)) return d > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  std::string s = fmt::format("{}", d);  // the shortest text that reads back as d
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string torch_dtype(DType d) {
  return d == DType::BF16 ? "torch.bfloat16" : d == DType::F16 ? "torch.float16" : "torch.float32";
}

std::string list_of(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::vector<std::string> comment(const std::string& text) {
  std::vector<std::string> out;
  std::string line = "#";
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (line.size() > 1 && line.size() + 1 + word.size() > kWidth) {
      out.push_back(line);
      line = "#";
    }
    line += " " + word;
    at = end + 1;
  }
  if (line.size() > 1) out.push_back(line);
  return out;
}

std::string tame(const std::string& path) {
  std::string s = std::filesystem::path(path).filename().string();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-' && ch != '+') ch = '_';
  return s.empty() ? "the case" : s;
}

std::string split_literal(const std::string& text, size_t indent) {
  const std::string pad(indent, ' ');
  std::string out, part;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find(' ', at + 1);
    end = end == std::string::npos ? text.size() : end;
    const std::string word = text.substr(at, end - at);  // with its leading space: the literals join to text
    if (!part.empty() && indent + lit(part + word).size() + 2 > kWidth) {
      out += pad + lit(part) + "\n";
      part.clear();
    }
    part += word;
    at = end;
  }
  return out + pad + lit(part);
}

std::string wrapped(const std::string& head, const std::vector<std::string>& items, const std::string& tail,
                    size_t indent, const std::string& open, const std::string& close) {
  std::string one = head + open;
  for (size_t i = 0; i < items.size(); ++i) one += (i ? ", " : "") + items[i];
  const size_t nl = head.rfind('\n'), start = nl == std::string::npos ? 0 : nl + 1;  // the last line counts
  if (one.size() - start + close.size() + tail.size() <= kWidth) return one + close + tail;
  const std::string pad(indent, ' ');
  std::string out = head + open + "\n", line = pad;
  for (auto& it : items) {
    if (line.size() > indent && line.size() + it.size() + 2 > kWidth) {
      out += line + "\n";
      line = pad;
    }
    line += (line.size() > indent ? " " : "") + it + ",";
  }
  if (line.size() - 1 + close.size() + tail.size() <= kWidth) {  // the bracket closes the last line
    line.pop_back();
    return out + line + close + tail;
  }
  return out + line + "\n" + std::string(indent >= 4 ? indent - 4 : 0, ' ') + close + tail;
}

std::string call(const std::string& head, const std::vector<std::string>& args, size_t indent) {
  std::string one = head + "(";
  for (size_t i = 0; i < args.size(); ++i) one += (i ? ", " : "") + args[i];
  one += ")";
  if (indent + one.size() <= kWidth) return one;
  const std::string pad(indent + 4, ' ');
  std::string out = head + "(\n", line = pad;
  for (auto& a : args) {
    if (line.size() > pad.size() && line.size() + a.size() + 2 > kWidth) {
      out += line + "\n";
      line = pad;
    }
    line += (line.size() > pad.size() ? " " : "") + a + ",";
  }
  return out + line + "\n" + std::string(indent, ' ') + ")";
}

void Lines::add(const std::string& text) {
  for (size_t at = 0;;) {
    const size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) return;
    at = nl + 1;
  }
}

void Lines::add(const std::vector<std::string>& many) {
  for (auto& l : many) add(l);
}

void Lines::blank(int n) { lines.insert(lines.end(), static_cast<size_t>(n), ""); }

std::string Lines::text() const {
  std::string s;
  for (auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace flce::py
