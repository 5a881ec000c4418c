// One root cause, one finding (issue #40). The ablation keys a finding by its failure class and
// essential features, so one defect that shows as several classes (on Liger main, compiled with
// every target ignored: a nonfinite gradient, and with reduction=none an out-of-bounds loss) is
// several findings. Two rules group them after the analyses, and never merge two causes:
//
//   a symptom   an ablated run-time failure (numeric or a CUDA fault) of another class on the
//               same oracle whose essential features are the root's, or, both new tonight, a
//               superset of them (the extra features only choose how the defect shows). The root
//               is the finding with the fewest essential features (then a known one, then the
//               first seen). Trace-time signatures name their bug and are never grouped; two
//               findings of one class are two causes by the ablation's own rule.
//   a variant   a finding whose ablation could not run because its case passes alone in a fresh
//               worker (it depends on what ran before it): listed under the ablated finding on
//               its oracle whose essential features its case carries (same class first, then the
//               most specific); under a known finding only when its class is that finding's.
//
// A known finding is never a symptom, and a new one is grouped under a known one only on equal
// features (or as a variant of its class): a known defect never hides a new one. Differential
// findings (--baseline) are per configuration and stay apart.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "case/case.hpp"
#include "fuzz/findings/finding.hpp"

namespace flce {

// Sets Finding::root (the root's id) and root_why on each symptom and variant (a nightly files
// it with its root: nights/night.cpp); clears a previous grouping first, so it can run again
// after a resume. `case_of`: a finding's first case (nullopt:
// unreadable; such a variant stays alone).
void group_root_causes(std::vector<Finding>& findings,
                       const std::function<std::optional<Case>(const Finding&)>& case_of);

// The same over a campaign directory: a finding's case is findings/<id>/case.json.
void group_root_causes(std::vector<Finding>& findings, const std::filesystem::path& dir);

// Is this finding listed under another (a symptom or a variant)?
inline bool is_symptom(const Finding& f) { return !f.root.empty(); }

}  // namespace flce
