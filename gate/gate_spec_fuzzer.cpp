// Fuzzer of `flce gate`'s SPEC parser (gate/gate.cpp parse_gate_spec). It documents
// std::invalid_argument naming the key for bad text; anything else escaping is a crash. An
// accepted SPEC printed again by spec_text must parse back to the same fields.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gate/gate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  flce::GateSpec s;
  try {
    s = flce::parse_gate_spec(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (s.subject.empty()) std::abort();
  flce::GateSpec b = flce::parse_gate_spec(flce::spec_text(s));  // must not throw
  if (b.subject != s.subject || b.path != s.path || b.python != s.python || b.git_repo != s.git_repo ||
      b.git_ref != s.git_ref)
    std::abort();
  return 0;
}
