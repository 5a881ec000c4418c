#include "fuzz/campaign/campaign_state.hpp"

#include "judge/signature.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <type_traits>
#include <sstream>
#include <stdexcept>

namespace flce {

namespace fs = std::filesystem;

namespace {

// An integer field of state.json: a JSON integer in T's range. nlohmann's get<T>() would cast
// a float (1e300) to T, which is undefined (UBSan; fuzz/targets/regressions/campaign_state_fuzzer/).
template <class T>
T integer_of(const nlohmann::json& v, const std::string& field) {
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(hi)) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i >= 0 && static_cast<uint64_t>(i) <= static_cast<uint64_t>(hi)) return static_cast<T>(i);
    } else {
      if (i >= static_cast<int64_t>(lo) && i <= static_cast<int64_t>(hi)) return static_cast<T>(i);
    }
  }
  throw CampaignStateError(fmt::format("state.json: {}: must be an integer in [{}, {}], got {}", field, lo, hi,
                                       v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

template <class T>
T integer_at(const nlohmann::json& j, const char* key, std::optional<T> fallback = std::nullopt) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw CampaignStateError(fmt::format("state.json: {}: missing", key));
  }
  return integer_of<T>(j.at(key), key);
}

}  // namespace

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
  if (!subject_git.is_null()) j["subject_git"] = subject_git;
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
  if (!eager_seeds.empty()) {
    auto ej = nlohmann::ordered_json::object();
    for (auto& [seed, cur] : eager_seeds) ej[std::to_string(seed)] = {{"next", cur.next}, {"done_above", cur.done_above}};
    j["eager_seeds"] = ej;
  }
  auto lj = nlohmann::ordered_json::object();
  for (auto& [name, t] : lanes) lj[name] = t.to_json();
  j["lanes"] = lj;
  auto mj = nlohmann::ordered_json::object();
  for (auto& [key, l] : ladders)
    mj[key] = {{"ladder", l.ladder}, {"first_failing_stage", l.first_failing_stage}, {"walks", l.walks}, {"hits", l.hits}};
  j["ladders"] = mj;
  if (!compile_failures.empty()) j["compile_failures"] = compile_failures;
  j["corpus_done"] = corpus_done;
  j["outcomes"] = outcomes;
  for (auto& [k, a] : approximated) j["approximated"][k] = {{"cases", a.cases}, {"worst_over_exact", a.worst_over_exact}};
  j["graphs"] = graphs;
  j["families_retired"] = families_retired;
  j["cases_retired"] = cases_retired;
  if (!abandoned.empty()) j["abandoned"] = abandoned;
  j["coverage"] = coverage.to_json();
  j["explained"] = explained.to_json();
  nlohmann::ordered_json picks = nlohmann::ordered_json::object();
  for (auto& [fam, cand] : family_picks) picks[std::to_string(fam)] = cand;
  j["family_picks"] = picks;
  nlohmann::ordered_json epicks = nlohmann::ordered_json::object();
  for (auto& [g, cand] : eager_picks) epicks[std::to_string(g)] = cand;
  j["eager_picks"] = epicks;
  j["eager_group"] = eager_group;
  nlohmann::ordered_json nb = nlohmann::ordered_json::array();
  for (auto& [key, case_json] : neighbours) nb.push_back({{"key", key}, {"case", case_json}});
  j["neighbours"] = nb;
  auto fj = nlohmann::ordered_json::array();
  for (auto& f : findings) fj.push_back(f.to_json());
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
    throw CampaignStateError(schema.rfind("flce-campaign-state/", 0) == 0
                                 ? "state.json: schema '" + schema + "' is not the one this flce reads (flce-campaign-state/1): "
                                   "written by another flce version"
                                 : "state.json: no \"schema\": \"flce-campaign-state/1\"");
  CampaignState s;
  s.subject = j.at("subject").get<std::string>();
  s.subject_path = j.value("subject_path", "");
  if (j.contains("subject_git") && j["subject_git"].is_object()) s.subject_git = j["subject_git"];
  s.family_size = integer_at<uint64_t>(j, "family_size", uint64_t{1});  // states written before families
  s.device = j.value("device", "");
  s.runs = integer_at<int64_t>(j, "runs", int64_t{0});
  s.cases_done = integer_at<int64_t>(j, "cases_done");
  s.elapsed_s = j.at("elapsed_s").get<double>();
  if (!j.at("first_finding_s").is_null()) s.first_finding_s = j.at("first_finding_s").get<double>();
  s.worker_restarts = integer_at<int64_t>(j, "worker_restarts", int64_t{0});
  s.journal_bytes = integer_at<uint64_t>(j, "journal_bytes", uint64_t{0});
  for (auto& [k, v] : j.at("seeds").items()) {
    SeedCursor c;
    c.next = integer_at<uint64_t>(v, "next");
    for (auto& i : v.at("done_above")) c.done_above.insert(integer_of<uint64_t>(i, "seeds." + k + ".done_above"));
    s.seeds[std::stoull(k)] = c;
  }
  const nlohmann::json eager_seeds_j = j.value("eager_seeds", nlohmann::json::object());  // a named copy: items() of a temporary dangles
  for (auto& [k, v] : eager_seeds_j.items()) {
    SeedCursor c;
    c.next = v.at("next").get<uint64_t>();
    c.done_above = v.at("done_above").get<std::set<uint64_t>>();
    s.eager_seeds[std::stoull(k)] = c;
  }
  const nlohmann::json lanes_j = j.value("lanes", nlohmann::json::object());  // a named copy: items() of a temporary dangles
  for (auto& [k, v] : lanes_j.items()) s.lanes[k] = LaneTotals::from_json(v);
  const nlohmann::json ladders_j = j.value("ladders", nlohmann::json::object());  // a named copy: items() of a temporary dangles
  for (auto& [k, v] : ladders_j.items()) {
    SharedLadder l;
    l.ladder = v.value("ladder", nlohmann::json::array());
    l.first_failing_stage = v.value("first_failing_stage", "");
    l.walks = v.value("walks", int64_t{0});
    l.hits = v.value("hits", int64_t{0});
    s.ladders[k] = l;
  }
  if (j.contains("compile_failures") && j["compile_failures"].is_object())
    for (auto& [k, v] : j["compile_failures"].items()) s.compile_failures[k] = integer_of<int64_t>(v, "compile_failures." + k);
  else  // states from before: the ladders' sightings were the count
    for (auto& [k, l] : s.ladders) s.compile_failures[k] = l.sightings();
  s.corpus_done = j.at("corpus_done").get<std::set<std::string>>();
  for (auto& [o, n] : j.at("outcomes").items()) s.outcomes[o] = integer_of<int64_t>(n, "outcomes." + o);
  if (j.contains("approximated") && j["approximated"].is_object())
    for (auto& [k, v] : j["approximated"].items())
      if (v.is_object())
        s.approximated[k] = {integer_at<int64_t>(v, "cases", int64_t{0}),
                             v.value("worst_over_exact", 0.0)};
  if (j.contains("graphs")) s.graphs = j.at("graphs").get<std::set<std::string>>();
  s.families_retired = integer_at<int64_t>(j, "families_retired", int64_t{0});
  s.cases_retired = integer_at<int64_t>(j, "cases_retired", int64_t{0});
  if (j.contains("abandoned") && j["abandoned"].is_object())
    for (auto& [k, v] : j["abandoned"].items()) s.abandoned[k] = integer_of<int64_t>(v, "abandoned." + k);
  if (j.contains("coverage")) s.coverage = CoverageTable::from_json(j["coverage"]);  // older states: none
  if (j.contains("explained")) s.explained = ExplainedCells::from_json(j["explained"]);
  if (j.contains("family_picks"))
    for (auto& [k, v] : j["family_picks"].items()) s.family_picks[std::stoull(k)] = v.get<uint32_t>();
  if (j.contains("eager_picks") && j["eager_picks"].is_object())
    for (auto& [k, v] : j["eager_picks"].items()) s.eager_picks[std::stoull(k)] = integer_of<uint32_t>(v, "eager_picks." + k);
  s.eager_group = integer_at<uint64_t>(j, "eager_group", uint64_t{1});  // states from before groups: plain cases
  const nlohmann::json neighbours_j = j.value("neighbours", nlohmann::json::array());  // a named copy: items() of a temporary dangles
  for (auto& n : neighbours_j)
    s.neighbours.emplace_back(n.at("key").get<std::string>(), n.at("case").get<std::string>());
  for (auto& f : j.at("findings")) {
    Finding x = Finding::from_json(f);
    x.count = integer_at<int64_t>(f, "count");  // range-checked like every state integer
    s.findings.push_back(x);
  }
  s.environment = j.value("environment", nlohmann::json::object());
  s.capabilities = j.contains("capabilities") ? j["capabilities"] : nlohmann::json();
  s.subject_ran = j.value("subject_ran", s.cases_done > 0);  // older states: assume usable
  s.unusable = j.value("unusable", "");
  return s;
}

CampaignState parse_campaign_state(std::string_view text) {
  try {
    return CampaignState::from_json(nlohmann::json::parse(text.begin(), text.end()));
  } catch (const CampaignStateError&) {
    throw;
  } catch (const nlohmann::json::exception& e) {  // syntax, a missing key, a wrong type
    throw CampaignStateError(std::string("state.json: ") + e.what());
  } catch (const std::logic_error& e) {  // std::stoull on a seed key
    throw CampaignStateError(std::string("state.json: seeds: ") + e.what());
  }
}

std::optional<Finding> parse_adopted_finding(std::string_view text, const std::string& id) {
  auto fj = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!fj.is_object() || !fj.contains("signature") || !fj["signature"].is_string()) return std::nullopt;
  auto str = [&](const char* k) { return fj.contains(k) && fj[k].is_string() ? fj[k].get<std::string>() : std::string(); };
  Finding f;
  f.id = id;
  f.signature = fj["signature"].get<std::string>();
  if (f.signature.empty()) return std::nullopt;
  f.first_case = str("first_case");
  f.first_seen = f.last_seen = str("first_seen");
  f.first_seen_s = fj.contains("first_seen_s") && fj["first_seen_s"].is_number() ? fj["first_seen_s"].get<double>() : 0.0;
  f.count = 1;
  f.detail = str("detail");
  return f;
}

}  // namespace flce
