#include "case/expectations.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace flce {

std::vector<PinnedCase> load_expectations(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw CaseError(file, "cannot read the expectations file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // names line and column
    throw CaseError(file, std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_array()) throw CaseError(file, "must be a JSON array of {case, subject, expect} entries");
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  std::vector<PinnedCase> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    auto bad = [&](const std::string& field, const std::string& rule) {
      return CaseError(fmt::format("{}: entry {}{}", file, i, field.empty() ? "" : ": " + field), rule);
    };
    if (!e.is_object()) throw bad("", "must be an object");
    for (const char* k : {"case", "subject"})
      if (!e.contains(k) || !e[k].is_string() || e[k].get<std::string>().empty()) throw bad(k, "must be a non-empty string");
    if (!e.contains("expect") || !e["expect"].is_array()) throw bad("expect", "must be an array");
    PinnedCase p;
    p.file = e["case"].get<std::string>();
    p.subject = e["subject"].get<std::string>();
    for (size_t k = 0; k < e["expect"].size(); ++k) {
      const auto& x = e["expect"][k];
      const std::string f = fmt::format("expect[{}]", k);
      if (!x.is_object()) throw bad(f, "must be an object");
      if (!x.contains("outcome") || !x["outcome"].is_string()) throw bad(f + ".outcome", "must be a string");
      if (x.contains("torch") && !x["torch"].is_string()) throw bad(f + ".torch", "must be a string");
      PinnedExpectation pe{x.value("torch", ""), "any", x["outcome"].get<std::string>()};
      if (x.contains("device")) {
        pe.device = x["device"].is_string() ? x["device"].get<std::string>() : "";
        if (pe.device != "any" && pe.device != "cpu" && pe.device != "cuda")
          throw bad(f + ".device", "must be one of any, cpu, cuda");
      }
      p.expect.push_back(std::move(pe));
    }
    p.c = from_json_file((dir / p.file).string());  // throws naming the case file
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace flce
