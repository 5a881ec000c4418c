// A subject's declared contract (subjects/flce_subjects/contract.py) as flce uses it: the
// sample space every case of that subject is drawn and judged under, and, for a case made under
// another contract (a pin of another subject), what differs.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "case/case.hpp"
#include "case/sampler.hpp"

namespace flce {

// The contract's fields in `sp` (semantics, dtypes, gradient filter, grad_weight form, softmax
// dtype); every other field of `sp` is kept. A contract that is not an object (none declared):
// Liger's semantics and the defaults, as a plug-in without one is judged.
void apply_contract(const nlohmann::json& contract, SampleSpace& sp);

// "" when the case already is what the contract makes of it (under_contract(c) == c); else the
// fields that differ, e.g. "semantics torch (its contract: liger), grad_weight_form split
// (its contract: fused)". Op kinds carry no contract.
std::string contract_mismatch(const Case& c, const SampleSpace& sp);

}  // namespace flce
