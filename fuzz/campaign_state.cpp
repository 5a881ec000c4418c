#include "fuzz/campaign_state.hpp"

#include "judge/signature.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace flce {

namespace fs = std::filesystem;

namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void SeedCursor::mark(uint64_t i) {
  if (i < next) return;
  done_above.insert(i);
  while (done_above.count(next)) done_above.erase(next++);
}

Finding* CampaignState::finding(const std::string& signature) {
  for (auto& f : findings)
    if (f.signature == signature) return &f;
  return nullptr;
}

nlohmann::ordered_json CampaignState::to_json() const {
  nlohmann::ordered_json j;
  j["schema"] = "flce-campaign-state/1";
  j["subject"] = subject;
  j["subject_path"] = subject_path;
  j["family_size"] = family_size;
  if (!device.empty()) j["device"] = device;
  j["runs"] = runs;
  j["cases_done"] = cases_done;
  j["elapsed_s"] = elapsed_s;
  j["first_finding_s"] = first_finding_s ? nlohmann::ordered_json(*first_finding_s) : nlohmann::ordered_json();
  j["worker_restarts"] = worker_restarts;
  j["journal_bytes"] = journal_bytes;
  auto sj = nlohmann::ordered_json::object();
  for (auto& [seed, cur] : seeds) sj[std::to_string(seed)] = {{"next", cur.next}, {"done_above", cur.done_above}};
  j["seeds"] = sj;
  j["corpus_done"] = corpus_done;
  j["outcomes"] = outcomes;
  j["graphs"] = graphs;
  j["families_retired"] = families_retired;
  j["cases_retired"] = cases_retired;
  auto fj = nlohmann::ordered_json::array();
  for (auto& f : findings) {
    nlohmann::ordered_json x{{"id", f.id}, {"signature", f.signature}, {"count", f.count}, {"first_case", f.first_case},
                             {"first_seen", f.first_seen}, {"first_seen_s", f.first_seen_s}, {"last_seen", f.last_seen},
                             {"detail", f.detail}, {"cuda_poisoned", f.cuda_poisoned}, {"shrink", f.shrink},
                             {"shrink_runs", f.shrink_runs}, {"elements", f.elements}, {"min_elements", f.min_elements}};
    if (!f.first_shard.empty()) x["first_shard"] = f.first_shard;  // a single campaign's state stays as it was
    if (!f.case_from.empty()) x["case_from"] = f.case_from;
    fj.push_back(x);
  }
  j["findings"] = fj;
  j["environment"] = environment;
  j["capabilities"] = capabilities;
  j["subject_ran"] = subject_ran;
  if (!unusable.empty()) j["unusable"] = unusable;
  return j;
}

CampaignState CampaignState::from_json(const nlohmann::json& j) {
  const std::string schema = j.is_object() && j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (schema != "flce-campaign-state/1")
    throw std::runtime_error(schema.rfind("flce-campaign-state/", 0) == 0
                                 ? "schema '" + schema + "' is not the one this flce reads (flce-campaign-state/1): "
                                   "written by another flce version"
                                 : "no \"schema\": \"flce-campaign-state/1\"");
  CampaignState s;
  s.subject = j.at("subject").get<std::string>();
  s.subject_path = j.value("subject_path", "");
  s.family_size = j.value("family_size", uint64_t{1});  // states written before families
  s.device = j.value("device", "");
  s.runs = j.value("runs", int64_t{0});
  s.cases_done = j.at("cases_done").get<int64_t>();
  s.elapsed_s = j.at("elapsed_s").get<double>();
  if (!j.at("first_finding_s").is_null()) s.first_finding_s = j.at("first_finding_s").get<double>();
  s.worker_restarts = j.value("worker_restarts", int64_t{0});
  s.journal_bytes = j.value("journal_bytes", uint64_t{0});
  for (auto& [k, v] : j.at("seeds").items()) {
    SeedCursor c;
    c.next = v.at("next").get<uint64_t>();
    c.done_above = v.at("done_above").get<std::set<uint64_t>>();
    s.seeds[std::stoull(k)] = c;
  }
  s.corpus_done = j.at("corpus_done").get<std::set<std::string>>();
  s.outcomes = j.at("outcomes").get<std::map<std::string, int64_t>>();
  if (j.contains("graphs")) s.graphs = j.at("graphs").get<std::set<std::string>>();
  s.families_retired = j.value("families_retired", int64_t{0});
  s.cases_retired = j.value("cases_retired", int64_t{0});
  for (auto& f : j.at("findings")) {
    Finding x;
    x.id = f.at("id");
    x.signature = f.at("signature");
    x.count = f.at("count");
    x.first_case = f.at("first_case");
    x.first_seen = f.at("first_seen");
    x.first_seen_s = f.at("first_seen_s");
    x.last_seen = f.at("last_seen");
    x.detail = f.value("detail", "");
    x.cuda_poisoned = f.value("cuda_poisoned", false);
    x.shrink = f.value("shrink", "");
    x.shrink_runs = f.value("shrink_runs", 0);
    x.elements = f.value("elements", int64_t{0});
    x.min_elements = f.value("min_elements", int64_t{0});
    x.first_shard = f.value("first_shard", "");
    x.case_from = f.value("case_from", "");
    s.findings.push_back(x);
  }
  s.environment = j.value("environment", nlohmann::json::object());
  s.capabilities = j.contains("capabilities") ? j["capabilities"] : nlohmann::json();
  s.subject_ran = j.value("subject_ran", s.cases_done > 0);  // older states: assume usable
  s.unusable = j.value("unusable", "");
  return s;
}

bool is_finding(const std::string& outcome) { return outcome != "pass" && !is_unsupported_outcome(outcome); }

std::string finding_id(const std::string& signature) {
  std::string slug;
  for (char ch : signature) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (keep) slug += c;
    else if (!slug.empty() && slug.back() != '-') slug += '-';
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return fmt::format("{}-{:08x}", slug.empty() ? "finding" : slug, fnv1a(signature) & 0xffffffffu);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace flce
