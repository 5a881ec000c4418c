#include "judge/expectations.hpp"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "judge/signature.hpp"

namespace flce {

namespace {

using json = nlohmann::json;

std::string text_of(const json& parent, const char* key, const std::string& where, bool required) {
  auto it = parent.find(key);
  if (it == parent.end()) {
    if (required) throw CaseError(where + "." + key, "missing");
    return "";
  }
  if (!it->is_string()) throw CaseError(where + "." + key, "must be a string, got " + it->dump());
  std::string s = it->get<std::string>();
  if (required && s.empty()) throw CaseError(where + "." + key, "must not be empty");
  return s;
}

}  // namespace

std::vector<PinnedCase> parse_expectations(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // syntax errors and number overflow
    throw CaseError("expectations", std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_array()) throw CaseError("expectations", "must be an array of entries");
  std::vector<PinnedCase> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& e = j[i];
    const std::string at = fmt::format("expectations[{}]", i);
    if (!e.is_object()) throw CaseError(at, "must be an object");
    PinnedCase p;
    p.case_file = text_of(e, "case", at, true);
    p.subject = text_of(e, "subject", at, true);
    p.note = text_of(e, "note", at, false);
    auto x = e.find("expect");
    if (x == e.end()) throw CaseError(at + ".expect", "missing");
    if (!x->is_array()) throw CaseError(at + ".expect", "must be an array");
    for (size_t k = 0; k < x->size(); ++k) {
      const json& r = (*x)[k];
      const std::string rat = fmt::format("{}.expect[{}]", at, k);
      if (!r.is_object()) throw CaseError(rat, "must be an object");
      Expectation ex;
      ex.torch = text_of(r, "torch", rat, false);
      if (r.contains("device")) ex.device = text_of(r, "device", rat, true);
      if (ex.device != "any" && ex.device != "cpu" && ex.device != "cuda")
        throw CaseError(rat + ".device", "must be any, cpu or cuda, got " + ex.device);
      ex.outcome = text_of(r, "outcome", rat, true);
      p.expect.push_back(std::move(ex));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PinnedCase> read_expectations(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseError("expectations", "cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return parse_expectations(ss.str());
  } catch (const CaseError& e) {
    throw CaseError(e.field, std::string(e.what()).substr(e.field.size() + 2) + " (in " + path + ")");
  }
}

const Expectation* expectation_here(const std::vector<Expectation>& expect, const std::string& torch_version, bool cuda) {
  for (auto& e : expect)
    if (version_in_range(torch_version, e.torch) && (e.device == "any" || e.device == (cuda ? "cuda" : "cpu")))
      return &e;
  return nullptr;
}

}  // namespace flce
