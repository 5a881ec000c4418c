#include "nights/night.hpp"

#include <algorithm>
#include <ctime>
#include <fmt/format.h>

#include "fuzz/findings/finding.hpp"
#include "nights/progression.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& p) {
  return nlohmann::json::parse(read_text(p), nullptr, false);
}

// The store id a campaign finding was filed Known under ("store DB: <id>"), if any.
std::string store_id_of(const std::string& known) {
  if (known.rfind("store ", 0) != 0) return "";
  const size_t at = known.rfind(": ");
  return at == std::string::npos ? "" : known.substr(at + 2);
}

std::string device_of(const nlohmann::json& c) {
  if (!c.is_object()) return "";
  if (c.contains("sequence") && c["sequence"].is_array() && !c["sequence"].empty()) return device_of(c["sequence"].back());
  return c.value("device", "");
}

// The store's open findings in a campaign report's shape, for --known (fuzz/findings/known.cpp).
nlohmann::json known_file(const Store& store) {
  nlohmann::json fs_ = nlohmann::json::array();
  for (auto& f : store.findings()) {
    if (!f.open()) continue;  // a fixed finding seen again is news: a regression
    fs_.push_back({{"id", f.id}, {"signature", f.outcome}, {"cause_status", f.cause_status}, {"cause", f.key},
                   {"failure", f.failure}, {"essential", f.essential}});
    // Its symptoms and variants: tonight's sighting of one is a sighting of this finding.
    for (auto& a : f.aliases)
      fs_.push_back({{"id", f.id}, {"signature", a.outcome}, {"cause_status", a.cause_status}, {"cause", a.key},
                     {"failure", a.failure}, {"essential", a.essential}});
  }
  return {{"store", store.path()}, {"findings", fs_}};
}

}  // namespace

std::string default_night_label() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

RecordOutcome record_campaign_dir(Store& store, const fs::path& dir, const std::string& night,
                                  const SubjectIdentity& identity, const std::vector<ProgressionResult>& progression) {
  const nlohmann::json rep = read_json(dir / "report.json");
  if (!rep.is_object() || !rep.contains("findings") || !rep["findings"].is_array())
    throw StoreInputError(fmt::format("{}: no campaign report.json (run the campaign first)", dir.string()));
  if (rep.value("subject", "") != store.subject())
    throw StoreInputError(fmt::format("store {}: a store of subject '{}', not of the campaign's subject '{}' ({})",
                                      store.path(), store.subject(), rep.value("subject", ""), dir.string()));
  NightRecord n;
  n.night = night;
  n.identity_key = identity.key();
  n.identity_text = identity.text();
  n.dir = fs::absolute(dir).lexically_normal().string();
  n.torch = rep.contains("environment") && rep["environment"].is_object() ? rep["environment"].value("torch", "") : "";
  n.progression = progression;
  for (auto& f : rep["findings"]) {
    if (!f.is_object()) continue;
    SeenFinding s;
    s.id = f.value("id", "");
    if (s.id.empty() || s.id.rfind("pending-", 0) == 0) continue;  // its analysis was cut: a resume files it
    s.key = f.value("key", f.value("signature", ""));
    s.outcome = f.value("signature", "");
    s.failure = f.value("failure", "");
    s.cause_status = f.value("cause_status", "none");
    s.lane = f.value("lane", "");
    for (auto& e : f.value("essential", nlohmann::json::array()))
      if (e.is_string()) s.essential.push_back(e.get<std::string>());
    s.hits = f.value("count", int64_t{0});
    s.known = f.value("known", "");
    s.root = f.value("root", "");
    s.root_why = f.value("root_why", "");
    s.store_id = store_id_of(s.known);
    const fs::path fd = dir / "findings" / s.id;
    s.case_file = fs::exists(fd / "minimized.json") ? "minimized.json" : "case.json";
    s.case_json = read_json(fd / s.case_file);
    if (s.case_json.is_discarded()) s.case_json = nullptr;
    s.device = device_of(s.case_json);
    n.seen.push_back(std::move(s));
  }
  return store.record(n);
}

NightResult run_night(CampaignOptions o, const NightOptions& n) {
  Store store = Store::open(n.store, o.subject, true);
  const fs::path dir = o.out, nd = dir / "night";
  std::error_code ec;
  fs::create_directories(nd, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create it: {}", nd.string(), ec.message()));
  // A resumed night keeps what its first run decided: the label, the identity, the progression.
  nlohmann::json saved = read_json(nd / "night.json");
  std::string night = n.night.empty() ? default_night_label() : n.night;
  std::vector<ProgressionResult> progression;
  if (saved.is_object() && saved.value("store", "") == fs::absolute(n.store).string()) {
    night = saved.value("night", night);
    for (auto& p : saved.value("progression", nlohmann::json::array()))
      progression.push_back({p.value("id", ""), p.value("verdict", ""), p.value("outcome", "")});
  } else {
    write_atomic(nd / "known.json", known_file(store).dump(1) + "\n");
    std::vector<StoredFinding> open;
    for (auto& f : store.findings())
      if (f.open()) open.push_back(f);
    WorkerLaunch w;
    w.exe = o.flce_exe;
    w.subject = o.subject;
    w.subject_path = o.subject_path;
    w.mem_gib = o.worker_mem_gib;
    w.log_path = (nd / "progression-worker.log").string();
    w.cache_dir = (dir / "cache").string();
    if (!open.empty() && !o.quiet) std::fprintf(stderr, "night %s: re-running %zu open findings of %s\n", night.c_str(), open.size(), n.store.c_str());
    progression = run_progression(open, w, o.case_timeout_s);
    nlohmann::json pj = nlohmann::json::array();
    for (auto& p : progression) pj.push_back({{"id", p.id}, {"verdict", p.verdict}, {"outcome", p.outcome}});
    write_atomic(nd / "night.json", nlohmann::ordered_json{{"store", fs::absolute(n.store).string()}, {"night", night},
                                                           {"identity", n.identity.text()}, {"progression", pj}}
                                        .dump(1) + "\n");
  }
  o.known.push_back((nd / "known.json").string());
  NightResult r;
  r.campaign = run_campaign(o);
  const RecordOutcome rec = record_campaign_dir(store, dir, night, n.identity, progression);
  r.section = night_section(store, night, n.identity, progression, rec);
  write_night_sections(dir, r.section);
  // New to the store and to every known list, or back after a fix. A finding whose analysis the
  // budget cut (pending) is not in the store yet; the campaign still counts it new.
  r.new_findings = std::max<int64_t>(static_cast<int64_t>(r.section["new"].size()), r.campaign.new_findings);
  r.fixed = static_cast<int64_t>(r.section["fixed"].size());
  r.still_open = static_cast<int64_t>(r.section["still_open"].size());
  for (auto& x : r.section["new"])
    if (x.value("regressed", false)) ++r.regressed;
  return r;
}

}  // namespace flce
