// The worker's side of a lane (lanes.hpp): which oracles a request's lane runs, and the ladders
// the campaign already knows for its graph.
#pragma once
#include <nlohmann/json.hpp>

#include "fuzz/campaign/lanes.hpp"
#include "judge/differential.hpp"

namespace flce {

// The oracles lane `l` runs, set on `opt`: compiled runs everything; eager turns off the
// compiled run and the ladder, and adds reference-cuda on a CUDA case where the build and the
// machine have it (as `flce run` does).
void configure_lane(Lane l, const Case& c, RunOptions& opt);
// Puts a request's "ladders" (ladders_for) into the worker's memo under LadderMemo::key(c, signature).
void learn_ladders(const nlohmann::json& entries, const Case& c, LadderMemo& memo);

}  // namespace flce
