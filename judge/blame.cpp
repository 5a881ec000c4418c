#include "judge/blame.hpp"

#include <fmt/format.h>

namespace flce {

namespace {

// The precise reference and the one under the subject's logits contract (oracles/reference_cuda.hpp,
// MATH.md "Which reference"): eager is held against the same-contract one when it ran.
constexpr const char* kReference = "reference-cuda";
constexpr const char* kContractReference = "reference-cuda:subject-contract";
bool is_reference(const std::string& oracle) { return oracle.rfind(kReference, 0) == 0; }

const OracleVerdict* find(const std::vector<const OracleVerdict*>& vs, const std::string& oracle) {
  for (auto* v : vs)
    if (v && v->oracle == oracle) return v;
  return nullptr;
}

const OutputVerdict* output_of(const OracleVerdict* v, const std::string& output) {
  if (!v) return nullptr;
  for (auto& o : v->outputs)
    if (o.output == output) return &o;
  return nullptr;
}

// The side's name as maintainers read it: eager is "the subject" next to the reference.
std::string side(const std::string& oracle, const std::string& against) {
  return oracle == "eager" && is_reference(against) ? "subject" : oracle;
}

std::string blame_ratio(double r) { return fmt::format("{:.3g}x", r); }

}  // namespace

std::vector<Blame> blame(const std::vector<const OracleVerdict*>& verdicts) {
  std::vector<Blame> out;
  for (auto* v : verdicts) {
    if (!v) continue;
    std::string against;
    if (v->oracle == "eager") against = find(verdicts, kContractReference) ? kContractReference : kReference;
    else if (v->oracle == "compiled" || is_reference(v->oracle)) against = "eager";
    else continue;
    const OracleVerdict* av = find(verdicts, against);
    for (auto& o : v->outputs) {
      if (o.finding != Flaw::OUT_OF_BOUNDS) continue;
      Blame b;
      b.oracle = v->oracle;
      b.output = o.output;
      b.ratio = o.worst_ratio;
      b.against = against;
      const std::string me = side(v->oracle, against), other = side(against, v->oracle);
      std::string head = fmt::format("{} {} bound", me, blame_ratio(o.worst_ratio));
      const OutputVerdict* ao = output_of(av, o.output);
      if (!ao) {
        b.guilty = "unknown";
        b.line = fmt::format("{}; {} {}: side unknown", head, against, av ? "lacks this output" : "did not run");
        out.push_back(b);
        continue;
      }
      b.against_ran = true;
      b.against_ratio = ao->worst_ratio;
      b.against_finding = std::string(name(ao->finding));
      const bool other_ok = ao->finding == Flaw::OK;
      const std::string other_text =
          ao->finding == Flaw::OK || ao->finding == Flaw::OUT_OF_BOUNDS ? blame_ratio(ao->worst_ratio) : b.against_finding;
      head += fmt::format(", {} {}", other, other_text);
      if (v->oracle == "compiled") {
        b.guilty = other_ok ? "compiled" : "implementation";
        b.line = head + (other_ok ? ": compiled out of line (torch.compile side)"
                                  : ": both out: the implementation, not the compiler");
      } else if (other_ok) {
        b.guilty = v->oracle == "eager" ? "subject" : "reference";
        b.line = fmt::format("{}: {} out of line", head, me);
      } else {
        b.guilty = "bound-or-contract";
        b.line = head + ": both exceed — bound or contract suspect (triage MATH.md)";
      }
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace flce
