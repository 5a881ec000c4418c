// What `flce conformance` compares across subjects, recorded on each case's line of a
// campaign's cases.jsonl: the identity of the inputs the case ran and, for a scalar loss, the
// value each oracle got, the fp64 reference and the bound it was judged by (judge/MATH.md).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace flce {

// {"input": hex hash of the case JSON less its semantics (two subjects' cases of one key ran the
// same inputs iff equal: a contract may change a sampled case), "loss": {oracle: {"got", "fp64",
// "bound", "finding"}} for a reduction other than none (got is null where it was not finite)}.
nlohmann::json comparable_fields(const std::string& case_json, const nlohmann::json& report);

}  // namespace flce
