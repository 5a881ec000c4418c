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

bool is_sequence_case(const nlohmann::json& c) {
  return c.is_object() && c.contains("schema") && c.contains("sequence");
}

std::string settle_pass(const std::string& verdict, const StoredFinding& f) {
  if (verdict == "fixed" && f.cause_status == "not-run" && !is_sequence_case(f.case_json)) return "passes-alone";
  return verdict;
}

std::vector<ProgressionResult> run_progression(const std::vector<StoredFinding>& open, const WorkerLaunch& launch,
                                               double timeout_s) {
  std::vector<ProgressionResult> out;
  if (open.empty()) return out;
  WorkerClient client(launch, timeout_s);
  for (auto& f : open) {
    if (!f.open() || f.case_json.is_null() || f.case_json.is_discarded()) continue;
    const bool sequence = is_sequence_case(f.case_json);
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
    // An order-dependent finding (its analysis: "the case alone in a fresh worker gives pass")
    // whose stored case is not a sequence passes alone by definition: that says nothing about a
    // fix, so it stays open (seen on the GPU box: called fixed, then "regressed" the same night).
    verdict = settle_pass(verdict, f);
    out.push_back({f.id, verdict, r.outcome});
  }
  return out;
}

}  // namespace flce
