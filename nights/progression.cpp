#include "nights/progression.hpp"

#include "fuzz/findings/cause.hpp"
#include "fuzz/findings/finding.hpp"
#include "repro/repro.hpp"

namespace flce {

std::string progression_verdict(const std::string& stored, const std::string& got) {
  if (!is_finding(got)) return "fixed";
  if (got == stored || reproduces(got, stored)) return "still-open";
  // A numeric failure of the same class on another output is still that failure.
  const auto a = failure_class(stored), b = failure_class(got);
  if (a && b && a->key == b->key) return "still-open";
  return "changed";
}

std::vector<ProgressionResult> run_progression(const std::vector<StoredFinding>& open, const WorkerLaunch& launch,
                                               double timeout_s) {
  std::vector<ProgressionResult> out;
  if (open.empty()) return out;
  WorkerClient client(launch, timeout_s);
  for (auto& f : open) {
    if (!f.open() || f.case_json.is_null() || f.case_json.is_discarded()) continue;
    const bool sequence = f.case_json.is_object() && f.case_json.contains("schema") && f.case_json.contains("sequence");
    const std::string lane = f.lane == "eager" ? "eager" : "compiled";
    auto once = [&] {
      client.restart();  // a fresh process: nothing run before may matter
      return sequence ? client.run_sequence(f.case_json, lane) : client.run_case(f.case_json, lane);
    };
    WorkerReply r = once();
    std::string verdict = progression_verdict(f.outcome, r.outcome);
    if (verdict == "fixed") {
      WorkerReply again = once();
      if (is_finding(again.outcome)) r = again, verdict = progression_verdict(f.outcome, again.outcome);
    }
    out.push_back({f.id, verdict, r.outcome});
  }
  return out;
}

}  // namespace flce
