// Progression (ClusterFuzz's progression task): before a night explores, each open finding of
// the store is re-run on tonight's subject from its minimized case, in a fresh worker:
//   still fails (the same outcome, or the same failure at another stage)  -> still-open
//   passes, and again in a second fresh worker (one pass may be luck)     -> fixed
//   fails otherwise                                                       -> changed
//   passes, but its analysis found it order-dependent (cause not-run) and
//   its stored case is not a sequence: a pass alone proves nothing          -> passes-alone (open)
// A finding found by the compiled lane re-runs in the compiled lane, an eager one without compiling.
#pragma once
#include <string>
#include <vector>

#include "fuzz/findings/worker_client.hpp"
#include "nights/store.hpp"

namespace flce {

// `launch`: tonight's subject (its path, the binary, a log); `timeout_s`: one case's limit.
// Throws std::runtime_error when a worker cannot start at all.
std::vector<ProgressionResult> run_progression(const std::vector<StoredFinding>& open, const WorkerLaunch& launch,
                                               double timeout_s);

// The verdict for a re-run outcome against the stored one (pure; the passes are confirmed by the caller).
std::string progression_verdict(const std::string& stored_outcome, const std::string& got);
// A confirmed "fixed" of an order-dependent finding re-run alone becomes "passes-alone" (pure).
std::string settle_pass(const std::string& verdict, const StoredFinding& f);
bool is_sequence_case(const nlohmann::json& c);

}  // namespace flce
