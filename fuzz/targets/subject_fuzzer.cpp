// Behaviour-guided fuzzer of a subject (env FLCE_FUZZ_SUBJECT, default `model`): each input
// is a case; it runs through the differential loop in-process (embedded Python), and what
// the *subject* did becomes libFuzzer features: code paths (addmm.dtype_out fast path vs
// fallback), dtype combination, outcome, signature, error/bound bucket, ladder stage. The
// corpus therefore grows toward new behaviour, not toward new lines of flce's C++.
// FLCE_FUZZ_COMPILED=0 skips the compiled oracle (fast smoke runs).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/targets/case_mutator.hpp"
#include "fuzz/targets/features.hpp"
#include "judge/differential.hpp"
#include "oracles/subject_worker.hpp"

using namespace flce;

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return fuzz::mutate_bytes(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Case c;
  try {
    c = from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const CaseError&) {
    return -1;
  }
  if (c.device == Device::CUDA && !default_subject_worker().cuda_available()) return -1;
  static const char* subject = std::getenv("FLCE_FUZZ_SUBJECT");
  static const bool compiled = !std::getenv("FLCE_FUZZ_COMPILED") || std::string(std::getenv("FLCE_FUZZ_COMPILED")) != "0";
  RunOptions opt;
  opt.subject = subject ? subject : "model";
  opt.compiled = compiled;
  RunReport r = run_case(c, opt);

  using fuzz::feature;
  feature("dtypes", std::string(dtype_name(c.input_dtype)) + "/" + std::string(dtype_name(c.weight_dtype)) + "/" +
                        (c.accum_dtype ? "fp32" : "none") + "/" + std::string(name(c.autocast)));
  feature("outcome", r.outcome);
  feature("stage", r.first_failing_stage);
  for (auto& o : r.oracles) {
    for (auto& p : o.paths) feature("path:" + o.oracle, p);
    feature("status:" + o.oracle, name(o.status));
    if (o.signature) feature("signature:" + o.oracle, o.signature->id);
    if (o.verdict)
      for (auto& v : o.verdict->outputs) feature("ratio:" + o.oracle + ":" + v.output, fuzz::ratio_bucket(v.worst_ratio));
  }
  // A finding is reported, not crashed on: libFuzzer keeps exploring; the campaign
  // (flce campaign) is what deduplicates and minimizes.
  static std::string last;
  if (r.outcome != "pass" && !is_unsupported_outcome(r.outcome) && r.outcome != last) {
    std::fprintf(stderr, "flce subject_fuzzer: outcome %s on %s\n", r.outcome.c_str(), to_json(c, -1).c_str());
    last = r.outcome;
  }
  return 0;
}
