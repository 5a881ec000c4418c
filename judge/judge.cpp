#include "judge/judge.hpp"
#include "judge/ratio.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace flce {

std::string_view name(Flaw f) {
  switch (f) {
    case Flaw::OK: return "ok";
    case Flaw::MISSING: return "missing";
    case Flaw::SHAPE: return "shape";
    case Flaw::DTYPE: return "dtype";
    case Flaw::NONFINITE: return "nonfinite";
    case Flaw::OUT_OF_BOUNDS: return "out-of-bounds";
    case Flaw::PREDICTION: return "prediction";
  }
  return "?";
}

bool OracleVerdict::pass() const {
  return std::all_of(outputs.begin(), outputs.end(), [](auto& o) { return o.finding == Flaw::OK; });
}
double OracleVerdict::worst_ratio() const {
  double r = 0;
  for (auto& o : outputs) r = std::max(r, o.worst_ratio);
  return r;
}
bool OracleVerdict::approximated() const {
  return pass() && std::any_of(outputs.begin(), outputs.end(), [](auto& o) { return o.n_approximated > 0; });
}
const OutputVerdict* OracleVerdict::first_failure() const {
  for (auto& o : outputs)
    if (o.finding != Flaw::OK) return &o;
  return nullptr;
}

double ulp_of(double v, DType d) {
  if (d == DType::I64) return 1.0;
  const int p = dtype_mantissa_bits(d);
  // smallest normal exponent per dtype
  const int emin = d == DType::F16 ? -14 : d == DType::F64 ? -1022 : -126;
  double a = std::fabs(v);
  int e = a > 0 ? std::ilogb(a) : emin;
  e = std::max(e, emin);
  return std::ldexp(1.0, e - (p - 1));
}

namespace {

enum class Cls { FINITE, NAN_, POSINF, NEGINF };
Cls cls(double v) {
  if (std::isnan(v)) return Cls::NAN_;
  if (std::isinf(v)) return v > 0 ? Cls::POSINF : Cls::NEGINF;
  return Cls::FINITE;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

OracleVerdict judge(const std::string& oracle, const Case& c, const Outputs& golden, const Bounds& bounds,
                    const Outputs& got, const JudgeOptions& opts) {
  OracleVerdict verdict{oracle, {}};
  const bool special = c.regime == Regime::SPECIAL_VALUES;
  for (auto& [nm, g] : golden) {
    OutputVerdict ov;
    ov.output = nm;
    auto it = got.find(nm);
    if (it == got.end()) {
      ov.finding = Flaw::MISSING;
      ov.detail = "not returned (expected " + shape_str(g.shape) + ")";
      verdict.outputs.push_back(ov);
      continue;
    }
    const Tensor64& s = it->second;
    ov.dtype = s.dtype;
    if (s.shape != g.shape) {
      ov.finding = Flaw::SHAPE;
      ov.detail = "shape " + shape_str(s.shape) + ", expected " + shape_str(g.shape);
      verdict.outputs.push_back(ov);
      continue;
    }
    if (opts.dtype_reference) {
      auto rt = opts.dtype_reference->find(nm);
      if (rt != opts.dtype_reference->end() && rt->second.dtype != s.dtype) {
        ov.finding = Flaw::DTYPE;
        ov.detail = fmt::format("dtype {}, eager returned {}", dtype_name(s.dtype), dtype_name(rt->second.dtype));
        verdict.outputs.push_back(ov);
        continue;
      }
    }
    const Tensor64& b = bounds.elem.at(nm);
    auto ia = bounds.approx.find(nm);
    const Tensor64* a = ia != bounds.approx.end() && ia->second.data.size() == b.data.size() ? &ia->second : nullptr;
    if (nm == "predicted_tokens") {
      for (size_t k = 0; k < g.data.size(); ++k) {
        bool ok;
        if (g.data[k] < 0) {
          ok = s.data[k] == g.data[k];
        } else {
          auto& acc = bounds.acceptable_predictions[k];
          ok = s.data[k] == g.data[k] || std::find(acc.begin(), acc.end(), static_cast<int64_t>(s.data[k])) != acc.end();
        }
        if (!ok) {
          ++ov.n_out_of_bounds;
          if (ov.worst_index < 0) ov.worst_index = static_cast<int64_t>(k);
        }
      }
      if (ov.n_out_of_bounds) {
        ov.finding = Flaw::PREDICTION;
        ov.worst_ratio = std::numeric_limits<double>::infinity();
        const double got = s.data[ov.worst_index];
        // An index outside the vocabulary is wrong whatever the row holds; say so in the subject's terms.
        const std::string where = got < 0 || got >= static_cast<double>(c.V)
                                      ? fmt::format(", not a vocabulary index: V = {}", c.V)
                                      : std::string();
        ov.detail = fmt::format("{} of {} tokens predicted outside the acceptable set (first at {}: got {}{}, expected {})",
                                ov.n_out_of_bounds, g.data.size(), ov.worst_index, got, where,
                                g.data[ov.worst_index]);
      }
      if (ov.worst_index >= 0) ov.got_at_worst = s.data[ov.worst_index], ov.golden_at_worst = g.data[ov.worst_index];
      verdict.outputs.push_back(ov);
      continue;
    }
    double num = 0, den = 0;
    for (size_t k = 0; k < g.data.size(); ++k) {
      const double gv = g.data[k], sv = s.data[k];
      Cls cg = cls(gv), cs = cls(sv);
      // special_values feeds NaN/Inf on purpose: where either side is non-finite the regime
      // expects it (0 * NaN in a GEMM, NaN rows that are ignored), so only finite pairs are judged.
      bool nonfinite_ok = special ? true : cg == cs;
      if (!nonfinite_ok) {
        if (ov.nonfinite_mismatches++ == 0) ov.worst_index = static_cast<int64_t>(k);
        continue;
      }
      if (cg != Cls::FINITE || cs != Cls::FINITE) continue;
      const double err = std::fabs(sv - gv);
      num += err * err;
      den += gv * gv;
      ov.max_abs_err = std::max(ov.max_abs_err, err);
      ov.max_ulp = std::max(ov.max_ulp, err / ulp_of(gv, s.dtype));
      // A declared approximation widens the bound by its own derived allowance only.
      const double exact = b.data[k], bound = exact + (a ? a->data[k] : 0.0), ratio = err / bound;
      if (a && err > exact && err <= bound) {
        ++ov.n_approximated;
        ov.approx_ratio = std::max(ov.approx_ratio, err / exact);
      }
      if (ratio > 1) ++ov.n_out_of_bounds;
      if (ratio > ov.worst_ratio) {
        ov.worst_ratio = ratio;
        ov.bound_at_worst = bound;
        if (ov.nonfinite_mismatches == 0) ov.worst_index = static_cast<int64_t>(k);
      }
    }
    ov.rel_fro = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (ov.nonfinite_mismatches) {
      ov.finding = Flaw::NONFINITE;
      ov.detail = fmt::format("{} elements differ in NaN/Inf pattern (first at {}: got {}, fp64 {})",
                              ov.nonfinite_mismatches, ov.worst_index, s.data[ov.worst_index], g.data[ov.worst_index]);
    } else if (ov.n_out_of_bounds) {
      ov.finding = Flaw::OUT_OF_BOUNDS;
      ov.detail = fmt::format("{} of {} elements out of bounds; worst at {}: err {:.3g} > bound {:.3g} ({})",
                              ov.n_out_of_bounds, g.data.size(), ov.worst_index, std::fabs(s.data[ov.worst_index] - g.data[ov.worst_index]),
                              ov.bound_at_worst, ratio_text(ov.worst_ratio));
    }
    if (ov.worst_index >= 0) ov.got_at_worst = s.data[ov.worst_index], ov.golden_at_worst = g.data[ov.worst_index];
    verdict.outputs.push_back(ov);
  }
  return verdict;
}

double relative_disagreement(const Outputs& a, const Outputs& b, const Bounds& bounds, std::string* worst_output) {
  double worst = 0;
  for (auto& [nm, ta] : a) {
    auto ib = b.find(nm);
    auto ibd = bounds.elem.find(nm);
    if (ib == b.end() || ibd == bounds.elem.end() || ib->second.data.size() != ta.data.size() || nm == "predicted_tokens")
      continue;
    for (size_t k = 0; k < ta.data.size(); ++k) {
      double d = std::fabs(ta.data[k] - ib->second.data[k]);
      if (!std::isfinite(d)) continue;
      double r = d / ibd->second.data[k];
      if (r > worst) {
        worst = r;
        if (worst_output) *worst_output = nm;
      }
    }
  }
  return worst;
}

}  // namespace flce
