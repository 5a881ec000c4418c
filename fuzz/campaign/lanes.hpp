// Campaign lanes: groups of workers that run different oracles on their own sample streams.
//   eager    golden + the subject eager (+ reference-cuda on CUDA where built): never torch.compile,
//            so plain cases (every case its own configuration) at the rate of the eager call;
//   compiled golden + eager + compiled + the backend ladder, in families (campaign.hpp).
// One campaign state and report covers every lane; the lane is part of a sampled case's key.
// The worker's side (what a lane runs) is lane_oracles.hpp: this header stays free of judge/,
// whose Finding is not the campaign's.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace flce {

enum class Lane { EAGER, COMPILED };
inline constexpr Lane kLanes[] = {Lane::EAGER, Lane::COMPILED};

std::string_view lane_name(Lane l);
std::optional<Lane> lane_named(std::string_view s);

struct LanePlan {
  Lane lane;
  int workers;
};

// "--lanes": "eager=6,compiled=2", "eager", "compiled", "eager,compiled" (no counts: `workers`
// split as the default split does). `workers_given`: --workers was on the command line, which
// counts must then add up to. Empty spec: the default split of `workers` (default_lanes), so
// a user who only asks for more workers gets both lanes, never every worker compiling.
// Throws std::invalid_argument naming the flag and the constraint.
std::vector<LanePlan> parse_lanes(const std::string& spec, int workers, bool workers_given);
// The default when neither --lanes nor --workers is given, for `workers` = cores / 2: half
// (at least one) compiled, the rest eager; a single worker is compiled (today's campaign).
std::vector<LanePlan> default_lanes(int workers);
std::string lanes_text(const std::vector<LanePlan>& plan);  // "eager=6,compiled=2"

// The sample stream of a lane: the compiled lane keeps the campaign's seed and its keys
// ("sample:<seed>#<index>", families); the eager lane draws plain cases of another stream,
// lane_seed(seed, EAGER), keyed "sample:<seed>/eager#<index>".
uint64_t lane_seed(uint64_t seed, Lane l);
std::string sample_key(uint64_t seed, Lane l, uint64_t index);
// The lane a case key belongs to: "/eager#" samples are eager, everything else compiled.
Lane lane_of_key(const std::string& key);

// Ladders shared by a campaign's compiled workers (CampaignState::ladders), keyed
// "<graph>|<signature>": graph is the ticket's short hash of graph_key, signature the compiled
// run's (judge/differential.hpp, RunReport::ladder_signature); a known signature
// (judge/signatures.json) is walked once per campaign and keyed "*|<signature>".
inline constexpr const char* kAnyGraph = "*";
struct SharedLadder {
  nlohmann::json ladder = nlohmann::json::array();  // [{backend, pass, what}]
  std::string first_failing_stage;
  int64_t walks = 0, hits = 0;  // cases that walked it / reused it
  int64_t sightings() const { return walks + hits; }
};
// The entries for `graph`, as a request carries them: [{"signature", "ladder", "first_failing_stage"}].
nlohmann::json ladders_for(const std::map<std::string, SharedLadder>& all, const std::string& graph);

// One lane's totals over the campaign (summed over resumed runs): cases, subject calls in
// compiled mode, and where the time went (RunTiming's fields, summed, plus the worker's whole
// case, the parent's dispatch-to-result round trip and the shrink phase's share).
struct LaneTotals {
  int workers = 0;  // in the latest run
  int64_t cases = 0, compiled_runs = 0;
  int64_t memo_hits = 0, traces_saved = 0;  // ladders reused from the shared memo; rungs not traced
  std::map<std::string, double> ms;  // inputs, golden, eager, reference, judge, compile, ladder, transfer, worker, round_trip
  double shrink_s = 0;
  void add(const nlohmann::json& timing, double worker_ms, double round_trip_ms);
  nlohmann::ordered_json to_json() const;
  static LaneTotals from_json(const nlohmann::json& j);
};
// The time split's rows, in report order: (field, label).
const std::vector<std::pair<std::string, std::string>>& lane_time_fields();

}  // namespace flce
