// Library code for `flce repro` / `flce minimize --pin` (torch-free).
#include "repro/repro.hpp"
#include "report/write.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "judge/differential.hpp"
#include "judge/expectations.hpp"
#include "judge/signature.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

std::string read_or_throw(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// Exclusive flock(2) on a directory for the lifetime of the object.
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + dir.string() + ": " + std::strerror(errno));
  }
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::vector<ExpectedOutcome> find_expectations(const std::string& case_path, const std::string& subject,
                                               std::string* from) {
  const fs::path file(case_path);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  auto answer = [&](std::string src, std::vector<ExpectedOutcome> v) {
    if (from) *from = std::move(src);
    return v;
  };
  if (fs::exists(dir / "report.json")) {
    nlohmann::json r = nlohmann::json::parse(read_or_throw(dir / "report.json"), nullptr, false);
    if (r.is_object() && (!r.contains("subject") || r["subject"] == subject)) {
      std::string outcome;
      if (r.contains("expectation")) {
        auto& e = r["expectation"];
        outcome = e.is_string() ? e.get<std::string>() : e.is_object() ? e.value("outcome", "") : "";
      } else if (r.contains("outcome") && r["outcome"].is_string()) {
        outcome = r["outcome"].get<std::string>();
      }
      if (!outcome.empty()) return answer((dir / "report.json").string(), {{"", "any", outcome}});
    }
  }
  if (fs::exists(dir / "expectation")) {
    std::string line = read_or_throw(dir / "expectation");
    line = line.substr(0, line.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) return answer((dir / "expectation").string(), {{"", "any", line}});
  }
  const fs::path corpus = dir.parent_path() / "expectations.json";
  if (dir.filename() == "cases" && fs::exists(corpus)) {
    std::vector<PinnedCase> pins;
    try {  // the corpus's one parser: an outcome may be an array of alternatives ("a | b")
      pins = parse_expectations(read_or_throw(corpus), corpus.string());
    } catch (const CaseError&) {
      return answer("", {});  // a broken corpus names no expectation (replay refuses it, by name)
    }
    for (const PinnedCase& e : pins) {
      if (e.subject != subject || !same_file(corpus.parent_path() / e.case_file, file)) continue;
      std::vector<ExpectedOutcome> v;
      for (const Expectation& x : e.expect) v.push_back({x.torch, x.device, x.outcome});
      return answer(corpus.string(), v);
    }
  }
  return answer("", {});
}

std::string expected_here(const std::vector<ExpectedOutcome>& expect, const std::string& torch_version, bool cuda) {
  for (auto& e : expect)
    if (version_in_range(torch_version, e.torch) && (e.device == "any" || e.device == (cuda ? "cuda" : "cpu")))
      return e.outcome;
  return "";
}

bool reproduces(const std::string& got, const std::string& expected) {
  if (expected.empty()) return got != "pass" && !is_unsupported_outcome(got);
  return outcome_matches(expected, got) || !restaged(got, expected).empty();
}

std::string restaged(const std::string& got, const std::string& expected) {
  if (expected.empty() || outcome_matches(expected, got) || !is_compile_failure(got)) return "";
  for (const std::string& alt : outcome_alternatives(expected))
    if (same_failure(alt, got)) return alt;
  return "";
}

std::string torch_minor_range(const std::string& v) {
  std::smatch m;
  if (!std::regex_search(v, m, std::regex("^([0-9]+)\\.([0-9]+)"))) return "";
  return fmt::format(">={}.{},<{}.{}", m[1].str(), m[2].str(), m[1].str(), std::stoi(m[2].str()) + 1);
}

std::string expectation_line(const PinEntry& e) {
  nlohmann::ordered_json j;
  j["case"] = "cases/" + e.name + ".json";
  j["subject"] = e.subject;
  if (!e.note.empty()) j["note"] = e.note;
  j["expect"] = nlohmann::ordered_json::array(
      {{{"torch", e.expect.torch}, {"device", e.expect.device}, {"outcome", e.expect.outcome}}});
  return json_line(j);
}

std::string pin_case(const std::string& corpus_dir, const Case& c, const PinEntry& e) {
  if (!std::regex_match(e.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]{0,99}")))
    throw CaseError("pin", "name must be letters, digits, '.', '_', '-' (not starting with a symbol), got '" + e.name + "'");
  const fs::path corpus(corpus_dir);
  const fs::path expectations = corpus / "expectations.json";
  const fs::path case_file = corpus / "cases" / (e.name + ".json");
  DirLock lock(corpus);
  const std::string text = read_or_throw(expectations);
  nlohmann::json before = nlohmann::json::parse(text, nullptr, false);
  if (!before.is_array()) throw std::runtime_error(expectations.string() + ": not a JSON array");
  const std::string rel = "cases/" + e.name + ".json";
  for (auto& x : before)
    if (x.is_object() && x.value("case", "") == rel)
      throw CaseError("pin", expectations.string() + " already has an entry for " + rel);
  if (fs::exists(case_file)) throw CaseError("pin", case_file.string() + " already exists");

  // Insert after the last entry, keeping one entry per line.
  const size_t close = text.rfind(']');
  const size_t last = text.find_last_not_of(" \t\r\n", close == std::string::npos ? 0 : close - 1);
  std::string updated;
  if (before.empty())
    updated = "[\n  " + expectation_line(e) + "\n]\n";
  else
    updated = text.substr(0, last + 1) + ",\n  " + expectation_line(e) + "\n" + text.substr(close);
  nlohmann::json after = nlohmann::json::parse(updated, nullptr, false);
  if (!after.is_array() || after.size() != before.size() + 1)
    throw std::runtime_error(expectations.string() + ": cannot append an entry to its layout");
  if (updated.back() != '\n') updated += '\n';

  fs::create_directories(case_file.parent_path());
  write_atomic(case_file, to_json(c) + "\n");
  write_atomic(expectations, updated);
  return case_file.string();
}

}  // namespace flce
