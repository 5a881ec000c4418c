// Judge: holds one oracle's Outputs against the fp64 golden reference and the bounds,
// output by output, and says exactly what is out of bounds and by how much.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "judge/bounds.hpp"
#include "case/case.hpp"
#include "case/outputs.hpp"

namespace flce {

// What is wrong with one output (judge()); a campaign's Finding (fuzz/findings) is a bug.
enum class Flaw : uint8_t {
  OK,
  MISSING,         // the golden has it, the oracle did not return it
  SHAPE,           // shape differs from the golden's
  DTYPE,           // dtype differs from the reference oracle's (compiled vs eager)
  NONFINITE,       // NaN/Inf pattern differs from the golden's
  OUT_OF_BOUNDS,   // finite error exceeds the derived bound
  PREDICTION,      // a predicted token outside the acceptable set
};
std::string_view name(Flaw f);

struct OutputVerdict {
  std::string output;
  Flaw finding = Flaw::OK;
  std::string detail;
  DType dtype = DType::F64;
  double max_abs_err = 0, max_ulp = 0, rel_fro = 0;
  double worst_ratio = 0;   // max over elements of err / bound (<= 1 passes)
  double bound_at_worst = 0;
  int64_t worst_index = -1, n_out_of_bounds = 0, nonfinite_mismatches = 0;
  // Elements beyond the exact bound but within the declared approximation's allowance
  // (Bounds::approx): not a finding, and not a plain pass either; the largest err / exact bound.
  int64_t n_approximated = 0;
  double approx_ratio = 0;
  // The oracle's and the fp64 golden's value at worst_index (NaN when there is none): what an
  // upstream report quotes as observed vs expected.
  double got_at_worst = std::numeric_limits<double>::quiet_NaN(), golden_at_worst = got_at_worst;
};

struct OracleVerdict {
  std::string oracle;  // e.g. "eager", "compiled", "reference-cuda"
  std::vector<OutputVerdict> outputs;
  bool pass() const;
  double worst_ratio() const;
  const OutputVerdict* first_failure() const;
  // Passes only thanks to the declared approximation (some output has n_approximated > 0).
  bool approximated() const;
};

struct JudgeOptions {
  // Oracle whose dtypes this one must match (compiled vs eager); null = skip dtype parity.
  const Outputs* dtype_reference = nullptr;
};

OracleVerdict judge(const std::string& oracle, const Case& c, const Outputs& golden, const Bounds& bounds,
                    const Outputs& got, const JudgeOptions& opts = {});

// ULP of `v` in dtype d (spacing of representable values at |v|).
double ulp_of(double v, DType d);

// Plain difference of two oracles relative to the bound (compiled vs eager): max err/bound.
double relative_disagreement(const Outputs& a, const Outputs& b, const Bounds& bounds, std::string* worst_output);

}  // namespace flce
