#include "judge/summary.hpp"

#include <cmath>
#include <fmt/format.h>

namespace flce {

namespace {
struct Stats {
  double min = INFINITY, max = -INFINITY, sum = 0, sq = 0;
  int64_t nan = 0, inf = 0, n = 0;
};
Stats stats(const Tensor64& t) {
  Stats s;
  for (double v : t.data) {
    ++s.n;
    if (std::isnan(v)) { ++s.nan; continue; }
    if (std::isinf(v)) { ++s.inf; continue; }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.sq += v * v;
  }
  return s;
}
std::string summary_shape(const std::vector<int64_t>& sh) {
  std::string r = "[";
  for (size_t i = 0; i < sh.size(); ++i) r += (i ? ", " : "") + std::to_string(sh[i]);
  return r + "]";
}
}  // namespace

std::string summary_table(const Outputs& o) {
  std::string out = fmt::format("{:<17} {:<12} {:<6} {:>14} {:>14} {:>14} {:>12} {:>5}\n", "output", "shape", "dtype",
                                "value/mean", "min", "max", "l2 norm", "nan");
  for (auto& [nm, t] : o) {
    Stats s = stats(t);
    double first = t.data.empty() ? NAN : t.data[0];
    double shown = t.shape.empty() ? first : (s.n - s.nan - s.inf > 0 ? s.sum / static_cast<double>(s.n - s.nan - s.inf) : NAN);
    out += fmt::format("{:<17} {:<12} {:<6} {:>14.7g} {:>14.7g} {:>14.7g} {:>12.6g} {:>5}\n", nm, summary_shape(t.shape),
                       dtype_name(t.dtype), shown, s.min, s.max, std::sqrt(s.sq), s.nan);
  }
  return out;
}

nlohmann::ordered_json summary_json(const Outputs& o, bool with_values) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto& [nm, t] : o) {
    Stats s = stats(t);
    nlohmann::ordered_json e;
    e["shape"] = t.shape;
    e["dtype"] = dtype_name(t.dtype);
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(fmt::format("{}", v)); };
    if (t.shape.empty() && !t.data.empty()) e["value"] = num(t.data[0]);
    e["min"] = num(s.min);
    e["max"] = num(s.max);
    e["l2"] = std::sqrt(s.sq);
    e["nan"] = s.nan;
    e["inf"] = s.inf;
    if (with_values) {
      auto arr = nlohmann::ordered_json::array();
      for (double v : t.data) arr.push_back(num(v));
      e["values"] = arr;
    }
    j[nm] = e;
  }
  return j;
}

}  // namespace flce
