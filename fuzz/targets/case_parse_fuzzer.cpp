// Byte-level fuzzer of the case parser (case/case.cpp from_json), for ASan+UBSan: no custom
// mutator, so it explores broken JSON and wrong types as well as valid cases (that is
// case_json_fuzzer's job). from_json documents CaseError for bad input; anything else
// escaping is a crash. Accepted text must reach a fixed point: its canonical form parses
// back to the same case and prints the same text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "case/case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  flce::Case c;
  try {
    c = flce::from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const flce::CaseError&) {
    return 0;
  }
  const std::string canon = flce::to_json(c);
  flce::Case back = flce::from_json(canon);  // a CaseError here escapes: a crash
  if (!(back == c) || flce::to_json(back) != canon) {
    std::fprintf(stderr, "case_parse_fuzzer: canonical form changed the case\n%s\n", canon.c_str());
    std::abort();
  }
  return 0;
}
