#include "case/sequence.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "case/sampler.hpp"

namespace flce {

using plain_json = nlohmann::json;  // named apart from case.cpp's ordered alias (unity builds)

std::string compiled_key(const Case& in) {
  Case c = in;
  c.extra_BT.clear();
  c.regime = Regime::NORMAL;
  c.semantics = Semantics::LIGER;
  c.batch = 1;
  return graph_key(c);
}

bool is_sequence_json(const std::string& text) {
  const plain_json j = plain_json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("sequence");
}

namespace {

// The first top-level field where two canonical case objects differ.
std::string first_difference(const std::string& a, const std::string& b) {
  const plain_json ja = plain_json::parse(a), jb = plain_json::parse(b);
  for (auto it = ja.begin(); it != ja.end(); ++it)
    if (!jb.contains(it.key()) || jb[it.key()] != it.value()) return it.key();
  return "case";
}

}  // namespace

Sequence sequence_from_json(const std::string& text) {
  plain_json j;
  try {
    j = plain_json::parse(text);
  } catch (const plain_json::exception& e) {
    throw CaseError("sequence", std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw CaseError("sequence", "must be an object {\"schema\", \"sequence\"}");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "schema" && it.key() != "scope" && it.key() != "sequence")
      throw CaseError(it.key(), "unknown field of a sequence case (fields: schema, scope, sequence)");
  if (!j.contains("schema") || j["schema"] != kSequenceSchema)
    throw CaseError("schema", fmt::format("must be \"{}\", got {}", kSequenceSchema,
                                          j.contains("schema") ? j["schema"].dump() : "nothing"));
  const plain_json& calls = j["sequence"];
  if (!calls.is_array() || calls.empty()) throw CaseError("sequence", "must be a non-empty array of cases");
  Sequence s;
  if (j.contains("scope")) {
    if (j["scope"] == "process") s.scope = SequenceScope::PROCESS;
    else if (j["scope"] != "compiled")
      throw CaseError("scope", "must be \"compiled\" or \"process\", got " + j["scope"].dump());
  }
  for (size_t k = 0; k < calls.size(); ++k) {
    try {
      s.calls.push_back(from_json(calls[k].dump()));
    } catch (const CaseError& e) {
      const std::string rule = std::string(e.what()).substr(e.field.size() + 2);
      throw CaseError(fmt::format("sequence[{}].{}", k, e.field), rule);
    }
  }
  validate(s);
  return s;
}

void validate(const Sequence& s) {
  if (s.calls.empty()) throw CaseError("sequence", "must be a non-empty array of cases");
  if (s.scope == SequenceScope::PROCESS) {
    for (size_t k = 1; k < s.calls.size(); ++k)
      if (s.calls[k].device != s.calls[0].device)
        throw CaseError(fmt::format("sequence[{}].device", k), "must equal sequence[0]'s: one process, one device");
    return;
  }
  const std::string key0 = compiled_key(s.calls[0]);
  for (size_t k = 1; k < s.calls.size(); ++k) {
    const std::string key = compiled_key(s.calls[k]);
    if (key != key0)
      throw CaseError(fmt::format("sequence[{}].{}", k, first_difference(key, key0)),
                      "must equal sequence[0]'s: the calls of a sequence share one compiled function "
                      "(only shapes, seed and values may differ; scope \"process\" lifts this)");
  }
}

std::string to_json(const Sequence& s, int indent) {
  plain_json calls = plain_json::array();
  for (const Case& c : s.calls) calls.push_back(plain_json::parse(to_json(c, -1)));
  nlohmann::ordered_json j;
  const char* scope = s.scope == SequenceScope::PROCESS ? "process" : "compiled";
  j["schema"] = kSequenceSchema;
  j["scope"] = scope;
  j["sequence"] = calls;
  if (indent < 0) return j.dump();
  // One call per line: a reviewer reads the order at a glance.
  std::string out = "{\n" + std::string(indent, ' ') + "\"schema\": \"" + kSequenceSchema + "\",\n" +
                    std::string(indent, ' ') + "\"scope\": \"" + scope + "\",\n" + std::string(indent, ' ') + "\"sequence\": [\n";
  for (size_t k = 0; k < s.calls.size(); ++k)
    out += std::string(2 * indent, ' ') + to_json(s.calls[k], -1) + (k + 1 < s.calls.size() ? ",\n" : "\n");
  return out + std::string(indent, ' ') + "]\n}";
}

Sequence any_case_from_json(const std::string& text) {
  if (is_sequence_json(text)) return sequence_from_json(text);
  return Sequence{{from_json(text)}};
}

Sequence any_case_from_json_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw CaseError(path, "cannot read the case file");
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return any_case_from_json(ss.str());
  } catch (const CaseError& e) {  // the message names the file too: "PATH: field: rule"
    throw CaseError(path, e.what());
  }
}

}  // namespace flce
