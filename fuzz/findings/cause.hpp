// A finding's cause: the class of its failure and the case's essential features. A feature is
// a field of the case away from its default (`softcap`, `dtype=fp32`, `reduction=none`); it is
// essential when resetting it alone to its default makes the failure go away (an ablation: one
// run per feature, in a fresh worker of the lane that found it). Two cases with one cause are
// one bug whatever output shows it first; two causes on one output are two bugs.
//
//   out-of-bounds@eager[softcap]                a numeric failure: class @ oracle [features]
//   tier1-decomposition@compiled[accum_dtype=fp32]   a trace-time error: signature @ oracle
//
// Crashes, timeouts and flce's own errors have no class here: they keep their outcome line.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "case/case.hpp"

namespace flce {

// What a failure is, read off an outcome line and its report.
struct FailureClass {
  std::string key;      // "out-of-bounds@eager", "tier1-decomposition@compiled"
  std::string kind;     // numeric: out-of-bounds | missing | nonfinite | prediction | dtype | shape; else the signature id
  std::string oracle;   // eager | compiled | reference-cuda ...
  bool numeric = false;
};
// nullopt for outcomes that have no class (pass, unsupported, crash:, timeout@, oom@, flce-error@).
std::optional<FailureClass> failure_class(const std::string& outcome);

// Does one run (its outcome line and report.json) show the failure class? Numeric: any output of
// that oracle with that finding (not only the first failing one). Trace-time: the oracle raised
// that signature.
bool shows(const FailureClass& f, const std::string& outcome, const nlohmann::json& report);
// The outputs of that oracle out of line with that class in this run: {"grad_weight": ratio, ...}.
std::map<std::string, double> failing_outputs(const FailureClass& f, const nlohmann::json& report);
// The worst err/bound of the class's outputs in this run (0 when none).
double worst_ratio(const FailureClass& f, const nlohmann::json& report);
// The worst err/bound of any output of the class's oracle, failing or not (a fresh seed of a
// marginal finding that stays in bounds still says how close it came).
double oracle_worst_ratio(const FailureClass& f, const nlohmann::json& report);

// One feature of a case and the case with it reset to the default (other fields kept; a field
// that depends on it follows: no ce_weight, no weight_spread regime).
struct Ablation {
  std::string feature;
  Case reset;
};
// The features of the case worth resetting for failure `f`, in a fixed order: for a trace-time
// error only what shapes the compiled graph (it does not depend on values, seed or ignored
// targets; a CUDA fault, raised when a kernel runs, may, so it is treated like a numeric
// failure), and compile options only for a failure of the compiled run.
std::vector<Ablation> ablations(const Case& c, const FailureClass& f);
// The case with one named feature reset (the rule of ablations()); nullopt when the case does not
// have it or the reset would not be a valid case.
std::optional<Case> reset_feature(const Case& c, const std::string& feature);
std::vector<std::string> features(const Case& c);

// "out-of-bounds@eager[ce_weight,softcap]" (features sorted).
std::string cause_key(const std::string& failure, std::vector<std::string> essential);
// Does the case carry every essential feature (with its value)?
bool carries(const Case& c, const std::vector<std::string>& essential);

// Fresh seeds of a case's configuration for confirming a marginal finding: seed k is a pure
// function of the case's seed and k, never the case's own.
Case with_fresh_seed(const Case& c, int k);
// A numeric finding under this multiple of its bound is marginal: it is re-run on fresh seeds.
inline constexpr double kMarginalRatio = 2.0;
inline constexpr int kConfirmSeeds = 8;

}  // namespace flce
