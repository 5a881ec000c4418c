#include "repro/emit_python.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "judge/bounds.hpp"
#include "oracles/golden.hpp"
#include "case/inputs.hpp"
#include "repro/short_repro.hpp"
#include "repro/repro_template.hpp"  // generated from repro/repro_template*.py (repro/CMakeLists.txt)

namespace flce {

namespace {

// The reproducer's text: repro/repro_template.py, a Python module in which the string literal
// "@PAYLOAD@" (alone on its line, inside `json.loads(...)`) is the one substitution.
constexpr std::string_view kTemplate = embedded::kReproTemplate;

// Next code point of UTF-8 text at i (advances i); invalid sequences give U+FFFD.
uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
  if (n == 0) {
    ++i;
    return c;
  }
  if (n < 0 || i + static_cast<size_t>(n) >= s.size()) {  // stray byte, or the sequence is cut short
    ++i;
    return 0xfffd;
  }
  uint32_t cp = c & (0x3fu >> n);
  for (int k = 1; k <= n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((cc & 0xc0) != 0x80) {
      ++i;
      return 0xfffd;
    }
    cp = (cp << 6) | (cc & 0x3fu);
  }
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  i += static_cast<size_t>(n) + 1;
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0xfffd;  // overlong or surrogate
  return cp;
}

// Little-endian hex of element bits, as the script's numpy dump writes them.
template <typename T>
void hex_le(std::string& out, T bits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (size_t k = 0; k < sizeof(T); ++k) {
    auto byte = static_cast<unsigned>((static_cast<uint64_t>(bits) >> (8 * k)) & 0xffu);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
}

struct DumpTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string hex;
};

// Values as generated (exact in d), as fp32 bits: the storage-dtype conversion is torch's
// own (flce and the script both call .to(dtype); torch's CPU kernels even round NaN to
// different bf16 bits by element position), so the generator is what must match.
DumpTensor float_tensor(const std::vector<float>& v, DType d, std::vector<int64_t> shape) {
  DumpTensor t{std::string(dtype_name(d)), std::move(shape), {}};
  t.hex.reserve(v.size() * 8);
  for (float f : v) hex_le(t.hex, f32_bits(f));
  return t;
}

// The signature table reduced to what classification needs (patterns, not prose).
nlohmann::ordered_json signature_patterns(const std::string& table_text) {
  nlohmann::json table = nlohmann::json::parse(table_text);
  if (!table.is_array()) throw std::runtime_error("signature table: must be a JSON array");
  auto out = nlohmann::ordered_json::array();
  for (auto& e : table)
    out.push_back({{"id", e.at("id")},
                   {"patterns", e.at("patterns")},
                   {"frame_patterns", e.value("frame_patterns", nlohmann::json::array())},
                   {"expected_torch", e.value("expected_torch", "")}});
  return out;
}

// The fp64 golden outputs and per-element bounds, for the script's numeric judge: hex of
// the fp64 bits (exact, NaN/Inf included). Empty when the case is too large to carry.
nlohmann::ordered_json judge_data(const Case& c) {
  const double work = static_cast<double>(c.batch) * static_cast<double>(c.BT) * static_cast<double>(c.V) *
                      static_cast<double>(c.H);
  if (work > 1 << 26) return nullptr;  // golden cost and script size: the script then skips judge:… outcomes
  Inputs in = make_inputs(c);
  Outputs gold = golden(c, in);
  Bounds bounds = compute_bounds(c, in);
  auto hex = [](const std::vector<double>& v) {
    std::string h;
    h.reserve(v.size() * 16);
    for (double d : v) {
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      hex_le(h, bits);
    }
    return h;
  };
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  size_t elements = 0;
  for (auto& [nm, t] : gold) {
    elements += t.data.size();
    nlohmann::ordered_json o{{"shape", t.shape}, {"values", hex(t.data)}, {"bounds", hex(bounds.elem.at(nm).data)}};
    if (nm == "predicted_tokens") o["acceptable"] = bounds.acceptable_predictions;
    // A declared approximation's allowance (grad_filter_eps): the script judges as flce does.
    if (auto a = bounds.approx.find(nm); a != bounds.approx.end()) o["allowance"] = hex(a->second.data);
    j[nm] = o;
  }
  return elements > (1u << 20) ? nlohmann::ordered_json(nullptr) : j;
}

}  // namespace

std::string py_string_literal(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = next_code_point(text, i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp < 0x7f) out += static_cast<char>(cp);
    else if (cp < 0x100) out += fmt::format("\\x{:02x}", cp);
    else if (cp < 0x10000) out += fmt::format("\\u{:04x}", cp);
    else out += fmt::format("\\U{:08x}", cp);
  }
  return out + "\"";
}

std::string json_line(const nlohmann::ordered_json& j, bool ascii) {
  auto scalar = [&](const nlohmann::ordered_json& v) {
    return v.dump(-1, ' ', ascii, nlohmann::json::error_handler_t::replace);
  };
  if (j.is_object()) {
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
      s += (it == j.begin() ? "" : ", ") + scalar(nlohmann::ordered_json(it.key())) + ": " + json_line(it.value(), ascii);
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); ++i) s += (i ? ", " : "") + json_line(j[i], ascii);
    return s + "]";
  }
  return scalar(j);
}

std::string emit_python(const EmitSpec& spec, const std::vector<Case>& earlier, const std::string& scope) {
  signature_patterns(spec.signatures_json);  // a broken table is refused in either form
  const std::string why = long_form_reason(spec, !earlier.empty());
  if (why.empty() && !spec.long_form) return emit_short_python(spec);
  nlohmann::ordered_json payload;
  payload["case"] = nlohmann::ordered_json::parse(to_json(spec.c, -1));
  payload["subject"] = spec.subject;
  payload["subject_path"] = spec.subject_path;
  payload["source"] = spec.source;
  auto expect = nlohmann::ordered_json::array();
  for (auto& e : spec.expect) expect.push_back({{"torch", e.torch}, {"device", e.device}, {"outcome", e.outcome}});
  payload["expect"] = expect;
  if (!earlier.empty()) {  // a sequence case; a plain case's payload is unchanged
    payload["earlier"] = nlohmann::ordered_json::array();
    for (const Case& e : earlier) payload["earlier"].push_back(nlohmann::ordered_json::parse(to_json(e, -1)));
    payload["scope"] = scope;
  }
  payload["signatures"] = signature_patterns(spec.signatures_json);
  // Numeric findings are judged against flce's golden: carried when one is expected (or any failure is).
  bool judged = spec.expect.empty();
  for (auto& e : spec.expect)  // any alternative ("a | judge:...") may be a numeric finding
    judged = judged || e.outcome.rfind("judge:", 0) == 0 || e.outcome.find(" | judge:") != std::string::npos;
  payload["golden"] = judged ? judge_data(spec.c) : nlohmann::ordered_json(nullptr);
  // JSON text, one top-level field (or signature) per line, each line one escaped literal:
  // readable, and nothing in it is code.
  std::vector<std::string> lines{"{"};
  for (auto it = payload.begin(); it != payload.end(); ++it) {
    const std::string key = json_line(nlohmann::ordered_json(it.key()), true) + ": ";
    const std::string comma = std::next(it) == payload.end() ? "" : ",";
    if (it.key() == "signatures" && it.value().is_array()) {
      lines.push_back(" " + key + "[");
      for (size_t i = 0; i < it.value().size(); ++i)
        lines.push_back("  " + json_line(it.value()[i], true) + (i + 1 < it.value().size() ? "," : ""));
      lines.push_back(" ]" + comma);
    } else if (it.key() == "golden" && it.value().is_object() && !it.value().empty()) {
      lines.push_back(" " + key + "{");
      for (auto g = it.value().begin(); g != it.value().end(); ++g)
        lines.push_back("  " + json_line(nlohmann::ordered_json(g.key()), true) + ": " + json_line(g.value(), true) +
                        (std::next(g) == it.value().end() ? "" : ","));
      lines.push_back(" }" + comma);
    } else {
      lines.push_back(" " + key + json_line(it.value(), true) + comma);
    }
  }
  lines.push_back("}");
  // The marker literal keeps its place and indentation; its line becomes the run of literals.
  std::string literal;
  for (auto& l : lines) literal += (literal.empty() ? "" : "\n    ") + py_string_literal(l + "\n");
  const std::string_view marker = "\"@PAYLOAD@\"";
  const size_t at = kTemplate.find(marker), first = kTemplate.find("@PAYLOAD@");
  if (at == std::string_view::npos || first != at + 1 || kTemplate.find("@PAYLOAD@", first + 1) != std::string_view::npos)
    throw std::logic_error("repro template: needs exactly one payload marker, the literal \"@PAYLOAD@\"");
  // After the shebang: why this case gets the long form (printable ASCII only: one comment line).
  std::string because = why.empty() ? "asked for (--long-form)" : why;
  for (char& ch : because)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  const size_t eol = kTemplate.find('\n') + 1;
  std::string script(kTemplate.substr(0, eol));
  script += "# Long form: " + because + ".\n";
  script += kTemplate.substr(eol, at - eol);
  script += literal;
  script += kTemplate.substr(at + marker.size());
  return script;
}

std::string input_dump(const Case& c) {
  Inputs in = make_inputs(c);
  std::map<std::string, DumpTensor> tensors;
  if (c.is_op()) {
    auto sh = [&](int64_t a, int64_t b) {
      return c.batched() ? std::vector<int64_t>{c.batch, a, b} : std::vector<int64_t>{a, b};
    };
    tensors["a"] = float_tensor(in.op_a, c.input_dtype, sh(c.V, c.BT));
    tensors["b"] = float_tensor(in.x, c.input_dtype, sh(c.BT, c.H));
    if (c.has_accumulator()) tensors["c"] = float_tensor(in.op_c, c.op_out_dtype(), sh(c.V, c.H));
  } else {
    auto per_token = [&](const Inputs& inp, const std::string& suffix) {
      tensors["x" + suffix] = float_tensor(inp.x, c.input_dtype, {inp.BT, c.H});
      DumpTensor t{"int64", {inp.BT}, {}};
      for (int64_t v : inp.target) hex_le(t.hex, static_cast<uint64_t>(v));
      tensors["target" + suffix] = t;
      tensors["token_grad" + suffix] = float_tensor(inp.token_grad, DType::F32, {inp.BT});
    };
    per_token(in, "");
    for (int64_t bt : c.extra_BT) per_token(make_inputs(c, bt), "@" + std::to_string(bt));
    tensors["w"] = float_tensor(in.w, c.weight_dtype, {c.V, c.H});
    if (c.bias) tensors["bias"] = float_tensor(in.bias, c.weight_dtype, {c.V});
    if (c.ce_weight) tensors["ce_weight"] = float_tensor(in.ce_weight, DType::F32, {c.V});
  }
  std::string out;
  for (auto& [nm, t] : tensors) {
    std::string shape;
    for (size_t k = 0; k < t.shape.size(); ++k) shape += (k ? "," : "") + std::to_string(t.shape[k]);
    out += fmt::format("{} {} {} {}\n", nm, t.dtype, shape, t.hex);
  }
  return out;
}

}  // namespace flce
