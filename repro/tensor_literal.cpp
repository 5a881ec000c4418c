#include "repro/tensor_literal.hpp"

#include <fmt/format.h>

#include "repro/py_source.hpp"

#include <cctype>
#include <cmath>

namespace flce {

namespace {

bool low_precision(DType d) { return d == DType::BF16 || d == DType::F16; }

std::string shape_args(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}


std::string value_note(const std::vector<float>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.6g}", values[i]);
  return s;
}

// `text  # comment` when that fits the last line, else the note alone on a line above.
std::string with_comment(std::string text, const std::string& name, const std::string& comment, const std::string& note) {
  const size_t nl = text.rfind('\n');
  const size_t last = nl == std::string::npos ? text.size() : text.size() - nl - 1;
  if (!comment.empty() && last + 4 + comment.size() <= 120) return text + "  # " + comment;
  if (!note.empty()) return "# " + name + ": " + note + "\n" + text;
  return text;
}

}  // namespace

uint32_t storage_bits(float v, DType d) {
  if (d == DType::BF16) return f32_to_bf16_bits(v);
  if (d == DType::F16) return f32_to_f16_bits(v);
  return f32_bits(v);
}

float storage_value(uint32_t bits, DType d) {
  if (d == DType::BF16) return bf16_bits_to_f32(static_cast<uint16_t>(bits));
  if (d == DType::F16) return f16_bits_to_f32(static_cast<uint16_t>(bits));
  return bits_f32(bits);
}

std::string hex_words(const std::vector<uint32_t>& bits, DType d) {
  std::string s;
  for (size_t i = 0; i < bits.size(); ++i)
    s += (i ? ", " : "") + (low_precision(d) ? fmt::format("0x{:04x}", bits[i] & 0xffffu) : fmt::format("0x{:08x}", bits[i]));
  return s;
}

std::vector<uint32_t> parse_hex_words(std::string_view text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '0' || (text[i + 1] != 'x' && text[i + 1] != 'X')) continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')) continue;
    size_t j = i + 2;
    uint32_t w = 0;
    while (j < text.size() && std::isxdigit(static_cast<unsigned char>(text[j]))) {
      const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
      w = (w << 4) | static_cast<uint32_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10);
      ++j;
    }
    if (j > i + 2) out.push_back(w);
    i = j - 1;
  }
  return out;
}

std::string TensorLiteral::python() const { return "torch.tensor([" + hex_words(bits, given) + "]" + suffix; }

TensorLiteral tensor_literal(const std::vector<float>& values, DType d, const std::vector<int64_t>& shape,
                             const std::string& device) {
  bool nan = false;
  for (float v : values) nan = nan || std::isnan(v);
  TensorLiteral t;
  t.converted = nan && low_precision(d);
  t.given = t.converted ? DType::F32 : d;
  t.bits.reserve(values.size());
  for (float v : values) t.bits.push_back(storage_bits(v, t.given));
  t.suffix = fmt::format(", dtype=torch.uint{}).view({})", t.given == DType::F32 ? 32 : 16, py::torch_dtype(t.given));
  if (shape.size() != 1) t.suffix += ".reshape(" + shape_args(shape) + ")";
  if (t.converted)  // one .to(device, dtype), as the subject host converts (on the CPU, for a CUDA tensor too)
    t.suffix += device == "cpu" ? ".to(" + py::torch_dtype(d) + ")" : ".to(\"" + device + "\", " + py::torch_dtype(d) + ")";
  else if (device != "cpu")
    t.suffix += ".to(\"" + device + "\")";
  return t;
}

std::string tensor_assignment(const std::string& name, const std::vector<float>& values, DType d,
                              const std::vector<int64_t>& shape, const std::string& device, const std::string& note) {
  const TensorLiteral t = tensor_literal(values, d, shape, device);
  std::vector<std::string> items;
  for (uint32_t b : t.bits) items.push_back(hex_words({b}, t.given));
  const std::string text = py::wrapped(name + " = torch.tensor(", items, t.suffix, 4);
  std::string comment = t.converted ? "fp32 as flce stages it: torch's own conversion picks the NaN bits"
                        : values.size() <= 8 ? value_note(values) : "";
  if (!note.empty()) comment = comment.empty() ? note : note + ": " + comment;
  return with_comment(text, name, comment, note);
}

std::string int_assignment(const std::string& name, const std::vector<int64_t>& values, const std::string& device,
                           const std::string& note) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(std::to_string(v));
  const std::string tail = device == "cpu" ? ")" : ", device=\"" + device + "\")";
  return with_comment(py::wrapped(name + " = torch.tensor(", items, tail, 4), name, note, note);
}


}  // namespace flce
