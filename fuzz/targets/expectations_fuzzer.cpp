// Fuzzer of the pinned-corpus parser (judge/expectations.cpp parse_expectations), which
// replay, gate and matrix read corpus/expectations.json with. It documents CaseError for
// bad input; anything else escaping is a crash. Every accepted rule's torch range is then
// matched against versions made of the range's own numbers (judge/signature.cpp
// version_in_range), which must never fail, and its outcome alternatives must each match.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "judge/expectations.hpp"
#include "judge/signature.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<flce::PinnedCase> pinned;
  try {
    pinned = flce::parse_expectations(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const flce::CaseError&) {
    return 0;
  }
  for (auto& p : pinned) {
    // parse_expectations promises the case; the subject is optional (a gate's corpus leaves it to
    // the SPEC; load_expectations requires it where replay and matrix need it).
    if (p.case_file.empty()) std::abort();
    for (auto& e : p.expect) {
      if (e.outcome.empty() || (e.device != "any" && e.device != "cpu" && e.device != "cuda")) std::abort();
      // Alternatives (an `outcome` array) each match themselves and never "pass" (a fix must show).
      if (e.outcome.find(flce::kOutcomeSeparator) != std::string::npos) {
        if (flce::outcome_matches(e.outcome, "pass") || flce::outcome_matches(e.outcome, "")) std::abort();
        const std::string first = e.outcome.substr(0, e.outcome.find(flce::kOutcomeSeparator));
        const std::string last = e.outcome.substr(e.outcome.rfind(flce::kOutcomeSeparator) + flce::kOutcomeSeparator.size());
        if (!flce::outcome_matches(e.outcome, first) || !flce::outcome_matches(e.outcome, last)) std::abort();
      } else if (!flce::outcome_matches(e.outcome, e.outcome)) {
        std::abort();
      }
      // Versions to try: the range itself stripped of operators, and a few fixed ones.
      std::string v;
      for (char ch : e.torch) v += (ch == '<' || ch == '>' || ch == '=' || ch == '!') ? ' ' : ch;
      for (const std::string& tv : {v.substr(v.find_first_not_of(' ') == std::string::npos ? v.size() : v.find_first_not_of(' ')),
                                    std::string("2.13.0+cpu"), std::string("")}) {
        for (bool cuda : {false, true}) {
          const flce::Expectation* x = flce::expectation_here(p.expect, tv, cuda);
          if (x && (x < p.expect.data() || x >= p.expect.data() + p.expect.size())) std::abort();
        }
      }
    }
  }
  return 0;
}
