#include "judge/expectations.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "judge/signature.hpp"

namespace flce {

namespace {

using json = nlohmann::json;

// A non-empty string member (required) or an absent/string one (optional).
std::string text_of(const json& parent, const char* key, const std::function<CaseError(const std::string&, const std::string&)>& bad,
                    bool required) {
  auto it = parent.find(key);
  if (it == parent.end() || !it->is_string() || (required && it->get<std::string>().empty())) {
    if (!required && it == parent.end()) return "";
    throw bad(key, required ? "must be a non-empty string" : "must be a string");
  }
  return it->get<std::string>();
}

}  // namespace

std::vector<PinnedCase> parse_expectations(std::string_view text, const std::string& label) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // syntax errors and number overflow; names line and column
    throw CaseError(label, std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_array()) throw CaseError(label, "must be a JSON array of {case, subject, expect} entries");
  std::vector<PinnedCase> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& e = j[i];
    auto bad = [&](const std::string& field, const std::string& rule) {
      return CaseError(fmt::format("{}: entry {}{}", label, i, field.empty() ? "" : ": " + field), rule);
    };
    if (!e.is_object()) throw bad("", "must be an object");
    PinnedCase p;
    p.case_file = text_of(e, "case", bad, true);
    p.subject = text_of(e, "subject", bad, false);  // a gate's corpus leaves it to the SPEC
    p.note = text_of(e, "note", bad, false);
    auto x = e.find("expect");
    if (x == e.end()) {  // a gate's corpus: the gate compares two sides, nothing is expected
      out.push_back(std::move(p));
      continue;
    }
    if (!x->is_array()) throw bad("expect", "must be an array");
    for (size_t k = 0; k < x->size(); ++k) {
      const json& r = (*x)[k];
      const std::string f = fmt::format("expect[{}]", k);
      auto rbad = [&](const std::string& field, const std::string& rule) { return bad(f + "." + field, rule); };
      if (!r.is_object()) throw bad(f, "must be an object");
      Expectation ex;
      ex.torch = text_of(r, "torch", rbad, false);
      if (r.contains("device")) {
        ex.device = r["device"].is_string() ? r["device"].get<std::string>() : "";
        if (ex.device != "any" && ex.device != "cpu" && ex.device != "cuda")
          throw rbad("device", "must be one of any, cpu, cuda");
      }
      ex.subject_version = text_of(r, "subject_version", rbad, false);
      auto o = r.find("outcome");
      if (o != r.end() && o->is_array()) {  // alternatives: one bug, several symptoms
        if (o->empty()) throw rbad("outcome", "must be a non-empty string or a non-empty array of them");
        for (size_t a = 0; a < o->size(); ++a) {
          const std::string alt = (*o)[a].is_string() ? (*o)[a].get<std::string>() : "";
          if (alt.empty() || alt == "pass" || alt.find(kOutcomeSeparator) != std::string::npos)
            throw rbad(fmt::format("outcome[{}]", a), "must be a non-empty outcome line other than pass, without ' | '");
          ex.outcome += (a ? std::string(kOutcomeSeparator) : "") + alt;
        }
      } else {
        ex.outcome = text_of(r, "outcome", rbad, true);
      }
      if (auto cz = r.find("cause"); cz != r.end()) {
        if (!cz->is_array() || cz->empty()) throw rbad("cause", "must be a non-empty array of feature strings");
        for (size_t a = 0; a < cz->size(); ++a) {
          const std::string feat = (*cz)[a].is_string() ? (*cz)[a].get<std::string>() : "";
          if (feat.empty() || feat.find_first_of(" ,[]") != std::string::npos)
            throw rbad(fmt::format("cause[{}]", a), "must be a feature such as \"softcap\" or \"reduction=none\" (no spaces, commas or brackets)");
          ex.cause.push_back(feat);
        }
      }
      p.expect.push_back(std::move(ex));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PinnedCase> read_expectations(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseError(path, "cannot read the expectations file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_expectations(ss.str(), path);
}

std::vector<LoadedPin> load_expectations(const std::string& path, bool need_subject) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<LoadedPin> out;
  std::vector<PinnedCase> pins = read_expectations(path);
  for (size_t i = 0; i < pins.size(); ++i)
    if (need_subject && pins[i].subject.empty())
      throw CaseError(fmt::format("{}: entry {}: subject", path, i), "must be a non-empty string");
  for (auto& p : pins) {
    Sequence calls = any_case_from_json_file((dir / p.case_file).string());  // names the case file
    out.push_back({std::move(p), std::move(calls)});
  }
  return out;
}

const Expectation* expectation_here(const std::vector<Expectation>& expect, const std::string& torch_version, bool cuda,
                                    const std::string& subject_version) {
  for (auto& e : expect)
    if (version_in_range(torch_version, e.torch) && (e.device == "any" || e.device == (cuda ? "cuda" : "cpu")) &&
        (e.subject_version.empty() || (!subject_version.empty() && subject_version.find(e.subject_version) != std::string::npos)))
      return &e;
  return nullptr;
}

}  // namespace flce
