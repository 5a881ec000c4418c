// An err/bound ratio as people read it: two decimals below 1e4 ("1.06x", "6206.64x"), scientific
// notation past it ("1.69e+04x", "2.84e+36x"), where the digits say nothing anyway.
#pragma once
#include <cmath>
#include <fmt/format.h>
#include <string>

namespace flce {

inline std::string ratio_text(double r) {
  return std::isfinite(r) && std::fabs(r) < 1e4 ? fmt::format("{:.2f}x", r) : fmt::format("{:.3g}x", r);
}

}  // namespace flce
