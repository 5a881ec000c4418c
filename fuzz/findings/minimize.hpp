// Shrinking a failing case while its outcome line stays exactly the same: greedy passes
// over simplifications -- flags to defaults (all at once, then one by one), sizes BT, V,
// H, batch (1, halving, then bisecting), simpler dtypes -- each kept only if a fresh run
// shows the identical outcome, until a pass keeps nothing (fixed point) or the time
// budget. A candidate that fails differently is rejected like one that passes.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "case/case.hpp"  // Case, case_size(): what "smaller" means

namespace flce {

struct MinimizeOptions {
  double budget_s = 60;
  // outcome of a case (one fresh, history-free run); the caller decides what runs it
  std::function<std::string(const Case&)> outcome;
  std::function<void(const std::string&)> log;    // one line per accepted step
  std::function<void(const std::string&)> trace;  // one line per run (kept or not)
  // seconds on a monotonic clock; empty: steady_clock. Tests pass a fake one so the budget
  // rule is checked without depending on how busy the machine is.
  std::function<double()> now;
};

struct MinimizeResult {
  Case original, minimized;
  std::string outcome;  // of the original, kept by every accepted step
  int runs = 0, accepted = 0;
  double seconds = 0;
  bool fixed_point = false;  // false: stopped by the budget
};

// Throws CaseError("minimize", ...) when the original passes or cannot run here.
MinimizeResult minimize(const Case& c, const MinimizeOptions& opt);

}  // namespace flce
