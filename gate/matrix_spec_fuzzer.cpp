// Fuzzer of what `flce matrix` parses: the pinned corpus as matrix rows' expectation rules
// (judge/expectations.cpp, as gate/matrix.cpp reads it) and torch version strings (the first
// line of the input: compare_torch_versions, expected_outcome). Documented: CaseError for a
// bad corpus; version strings never fail. compare_torch_versions must be an order.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gate/matrix.hpp"
#include "judge/expectations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string version(text.substr(0, nl == std::string_view::npos ? text.size() : nl));
  std::vector<std::string> versions{version, "2.13.0+cu130", "2.8.0"};
  std::vector<flce::ExpectRule> rules;
  try {
    for (auto& p : flce::parse_expectations(text.substr(nl == std::string_view::npos ? text.size() : nl + 1)))
      for (auto& e : p.expect) {
        rules.push_back({e.torch, e.device, e.outcome});
        versions.push_back(e.torch.substr(e.torch.find_first_of("0123456789") == std::string::npos
                                              ? e.torch.size() : e.torch.find_first_of("0123456789")));
      }
  } catch (const flce::CaseError&) {
  }
  for (auto& a : versions) {
    if (flce::compare_torch_versions(a, a) != 0) std::abort();
    for (auto& b : versions)
      if (flce::compare_torch_versions(a, b) != -flce::compare_torch_versions(b, a)) std::abort();
    for (bool cuda : {false, true}) {
      std::string got = flce::expected_outcome(rules, a, cuda);
      if (!rules.empty() && !got.empty()) {
        bool known = false;
        for (auto& r : rules) known = known || r.outcome == got;
        if (!known) std::abort();
      }
    }
  }
  return 0;
}
