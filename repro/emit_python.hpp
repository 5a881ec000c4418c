// Standalone Python reproducers for a case (`flce repro --emit-python`), and the text
// dump of a case's generated inputs that such a script must match bit for bit.
// Pure C++ (no torch): the script is a template plus one JSON payload; nothing taken
// from the case, the subject name or paths is ever spliced into code, only into the
// payload, which is embedded as an escaped string literal and parsed with json.loads.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "case/case.hpp"

namespace flce {

// One expected outcome for a torch version range and device ("any" | "cpu" | "cuda"),
// as in corpus/expectations.json. An empty list means "any non-pass outcome".
struct ExpectedOutcome {
  std::string torch, device = "any", outcome;
};

struct EmitSpec {
  Case c;
  std::string subject, subject_path;
  std::string source;  // where the case came from (shown by the script only)
  std::vector<ExpectedOutcome> expect;
  std::string signatures_json;  // judge/signatures.json text; ids and patterns are embedded
  bool long_form = false;       // the generator-port script even where the short one would do
};

// A Python string literal ("...") whose value is exactly `text`, read as UTF-8 (invalid
// bytes become U+FFFD). The literal itself is printable ASCII: quotes, backslashes,
// control and non-ASCII characters are escaped, so it cannot end early or span lines.
std::string py_string_literal(std::string_view text);

// JSON on one line with ", " and ": " separators (corpus/expectations.json's style);
// ascii: non-ASCII characters as \u escapes.
std::string json_line(const nlohmann::ordered_json& j, bool ascii = false);

// The script. Throws std::runtime_error if the signature table cannot be parsed. A sequence
// case (case/sequence.hpp): `earlier` are the calls run before spec.c in the same process,
// through the same compiled functions; scope "compiled" or "process".
// A small case gets the short literal script (short_repro.hpp); the rest, and spec.long_form,
// the generator-port script (repro_template.py), whose first comment line says why.
std::string emit_python(const EmitSpec& spec, const std::vector<Case>& earlier = {},
                        const std::string& scope = "compiled");

// The inputs flce generates for a case, one line per tensor sorted by name:
// "<name> <storage dtype> <d0,d1,..> <hex>", hex being the little-endian bits of each
// value as fp32 (exact in the storage dtype; int64 for targets). The emitted script's
// `--dump-inputs FILE` writes the same text from its own port of the generator.
std::string input_dump(const Case& c);

}  // namespace flce
