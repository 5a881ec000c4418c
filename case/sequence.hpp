// Sequence case: calls that share one compiled function, replayed in order in one process
// (a finding that shows only after earlier calls: a recompile on a second shape, a CUDA
// context an earlier call left broken). Canonical JSON:
//   {"schema": "flce-sequence/1", "scope": "compiled", "sequence": [case, case, ...]}
// Every call is a full Case; the last is the one judged, the earlier ones only run before it.
// scope "compiled" (the default): all calls share one compiled-function key (compiled_key),
// i.e. one compiled function. scope "process": the calls of one process (a CUDA context an
// earlier call broke); they may differ in configuration, calls with one compiled_key share
// its compiled function, all run on one device. See corpus/README.md ("Sequence cases").
#pragma once
#include <string>
#include <vector>

#include "case/case.hpp"

namespace flce {

inline constexpr const char* kSequenceSchema = "flce-sequence/1";

enum class SequenceScope : uint8_t { COMPILED, PROCESS };

struct Sequence {
  std::vector<Case> calls;  // the last is judged
  SequenceScope scope = SequenceScope::COMPILED;
  bool operator==(const Sequence&) const = default;
  const Case& last() const { return calls.back(); }
};

// What keys the subject host's compiled-function cache (runner.py _cache_key): sampler.hpp's
// graph_key less the fields the cache ignores (extra_BT, regime, semantics, batch). Two calls
// with one compiled_key run through the same compiled function in one process.
std::string compiled_key(const Case& c);

// True when the text is a JSON object with a "sequence" member (else: a plain case).
bool is_sequence_json(const std::string& text);
// Parse + validate: each call a valid case ("sequence[k].<field>: ..."), at least one call,
// scope compiled: one compiled_key for all ("sequence[k].<field>: must equal sequence[0]'s ...");
// scope process: one device for all.
void validate(const Sequence& s);
Sequence sequence_from_json(const std::string& text);
std::string to_json(const Sequence& s, int indent = 2);
// A plain case as a one-call sequence, a sequence as itself: what `flce run` and the
// corpus loader take.
Sequence any_case_from_json(const std::string& text);
Sequence any_case_from_json_file(const std::string& path);

}  // namespace flce
