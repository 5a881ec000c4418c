#include "fuzz/campaign/lanes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace flce {

std::string_view lane_name(Lane l) { return l == Lane::EAGER ? "eager" : "compiled"; }

std::optional<Lane> lane_named(std::string_view s) {
  for (Lane l : kLanes)
    if (lane_name(l) == s) return l;
  return std::nullopt;
}

std::vector<LanePlan> default_lanes(int workers) {
  if (workers <= 1) return {{Lane::COMPILED, 1}};
  // Half compiled: a compile costs seconds where an eager case costs a tenth of one, and the
  // compile-time bugs (this project's seed) are only reachable there; at a quarter, two compiled
  // workers of eight covered 11.7 graph configurations a minute on the H200.
  const int compiled = std::max(1, workers / 2);
  return {{Lane::EAGER, workers - compiled}, {Lane::COMPILED, compiled}};
}

std::vector<LanePlan> parse_lanes(const std::string& spec, int workers, bool workers_given) {
  if (spec.empty()) return default_lanes(workers);  // --workers N alone: the default split of N
  std::vector<LanePlan> plan;
  int counted = 0, uncounted = 0;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t eq = item.find('=');
    const std::string lname = item.substr(0, eq);
    const auto l = lane_named(lname);
    if (!l) throw std::invalid_argument(fmt::format("--lanes {}: unknown lane '{}' (lanes: eager, compiled)", spec, lname));
    for (auto& p : plan)
      if (p.lane == *l) throw std::invalid_argument(fmt::format("--lanes {}: lane '{}' given twice", spec, lname));
    int n = -1;
    if (eq != std::string::npos) {
      try {
        size_t used = 0;
        n = std::stoi(item.substr(eq + 1), &used);
        if (used != item.size() - eq - 1) n = -2;
      } catch (const std::exception&) {
        n = -2;
      }
      if (n < 1 || n > 64)
        throw std::invalid_argument(fmt::format("--lanes {}: '{}' needs a worker count in [1, 64]", spec, item));
      counted += n;
    } else {
      ++uncounted;
    }
    plan.push_back({*l, n});
  }
  if (plan.empty()) throw std::invalid_argument("--lanes: empty (lanes: eager, compiled)");
  if (uncounted && counted) throw std::invalid_argument(fmt::format("--lanes {}: give every lane a count or none", spec));
  if (counted) {
    if (workers_given && counted != workers)
      throw std::invalid_argument(fmt::format("--lanes {} names {} workers, --workers {}: they must agree", spec, counted, workers));
    if (counted > 64) throw std::invalid_argument(fmt::format("--lanes {}: {} workers, at most 64", spec, counted));
    return plan;
  }
  if (plan.size() == 1) return {{plan[0].lane, workers}};
  if (workers < 2) throw std::invalid_argument(fmt::format("--lanes {}: two lanes need at least 2 workers", spec));
  return default_lanes(workers);  // eager, compiled
}

std::string lanes_text(const std::vector<LanePlan>& plan) {
  std::string s;
  for (auto& p : plan) s += fmt::format("{}{}={}", s.empty() ? "" : ",", lane_name(p.lane), p.workers);
  return s;
}

uint64_t lane_seed(uint64_t seed, Lane l) {
  // Another stream for the eager lane: with --family 1 the two lanes would otherwise draw the
  // same cases. The golden-ratio constant splitmix64 uses.
  return l == Lane::COMPILED ? seed : seed ^ 0x9E3779B97F4A7C15ull;
}

std::string sample_key(uint64_t seed, Lane l, uint64_t index) {
  return l == Lane::COMPILED ? fmt::format("sample:{}#{}", seed, index) : fmt::format("sample:{}/{}#{}", seed, lane_name(l), index);
}

Lane lane_of_key(const std::string& key) {
  // samples and neighbours of eager findings ("neighbour:<id>/eager#<k>"); corpus keys never
  return key.rfind("corpus:", 0) != 0 && key.find("/eager#") != std::string::npos ? Lane::EAGER : Lane::COMPILED;
}

nlohmann::json ladders_for(const std::map<std::string, SharedLadder>& all, const std::string& graph) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& prefix : {graph + "|", std::string(kAnyGraph) + "|"})
    for (auto it = all.lower_bound(prefix); it != all.end() && it->first.rfind(prefix, 0) == 0; ++it)
      out.push_back({{"signature", it->first.substr(prefix.size())},
                     {"ladder", it->second.ladder},
                     {"first_failing_stage", it->second.first_failing_stage},
                     {"any_graph", prefix[0] == kAnyGraph[0]}});
  return out;
}

const std::vector<std::pair<std::string, std::string>>& lane_time_fields() {
  static const std::vector<std::pair<std::string, std::string>> f = {
      {"inputs", "inputs"},     {"golden", "golden"},   {"eager", "subject (eager)"}, {"reference", "reference"},
      {"judge", "judge"},       {"compile", "compile"}, {"ladder", "ladder"},         {"transfer", "of which transfer"},
      {"worker", "worker, whole case"}, {"round_trip", "parent round trip"}};
  return f;
}

void LaneTotals::add(const nlohmann::json& timing, double worker_ms, double round_trip_ms) {
  ++cases;
  if (timing.is_object()) {
    for (auto& [field, label] : lane_time_fields())
      if (timing.contains(field + "_ms")) ms[field] += timing[field + "_ms"].get<double>();
    compiled_runs += timing.value("compiled_runs", int64_t{0});
  }
  ms["worker"] += worker_ms;
  ms["round_trip"] += round_trip_ms;
}

nlohmann::ordered_json LaneTotals::to_json() const {
  nlohmann::ordered_json j{{"workers", workers}, {"cases", cases}, {"compiled_runs", compiled_runs},
                           {"memo_hits", memo_hits}, {"traces_saved", traces_saved}};
  nlohmann::ordered_json t = nlohmann::ordered_json::object();
  for (auto& [field, label] : lane_time_fields()) t[field + "_ms"] = ms.count(field) ? ms.at(field) : 0.0;
  j["ms"] = t;
  j["shrink_s"] = shrink_s;
  return j;
}

LaneTotals LaneTotals::from_json(const nlohmann::json& j) {
  LaneTotals t;
  t.workers = j.value("workers", 0);
  t.cases = j.value("cases", int64_t{0});
  t.compiled_runs = j.value("compiled_runs", int64_t{0});
  t.memo_hits = j.value("memo_hits", int64_t{0});
  t.traces_saved = j.value("traces_saved", int64_t{0});
  for (auto& [field, label] : lane_time_fields())
    t.ms[field] = j.contains("ms") ? j["ms"].value(field + "_ms", 0.0) : 0.0;
  t.shrink_s = j.value("shrink_s", 0.0);
  return t;
}

}  // namespace flce
