// Delta debugging (Zeller and Hildebrandt's ddmin): a 1-minimal subsequence of `items` for
// which `fails` still holds -- removing any single remaining item makes it pass. Order is
// kept (the items are calls made one after another). Used on the earlier calls of an
// order-dependent finding: which of them does the failing call need?
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace flce {

struct DdminStats {
  int tests = 0;
  bool budget_hit = false;
};

// `fails(items)` is assumed true and is not re-tested. `out_of_budget` (may be empty) is
// asked before each test; once true the smallest failing subsequence so far is returned.
template <class T>
std::vector<T> ddmin(std::vector<T> items, const std::function<bool(const std::vector<T>&)>& fails,
                     const std::function<bool()>& out_of_budget = {}, DdminStats* stats = nullptr) {
  DdminStats local;
  DdminStats& st = stats ? *stats : local;
  auto test = [&](const std::vector<T>& v) {
    if (out_of_budget && out_of_budget()) {
      st.budget_hit = true;
      return false;
    }
    ++st.tests;
    return fails(v);
  };
  if (items.empty()) return items;
  if (test({})) return {};  // nothing earlier is needed
  size_t n = 2;
  while (items.size() >= 2 && !st.budget_hit) {
    const size_t len = items.size(), chunk = (len + n - 1) / n;
    bool reduced = false;
    // Each subset alone, then each complement.
    for (size_t start = 0; start < len && !reduced; start += chunk) {
      std::vector<T> subset(items.begin() + static_cast<std::ptrdiff_t>(start),
                            items.begin() + static_cast<std::ptrdiff_t>(std::min(len, start + chunk)));
      if (subset.size() < len && test(subset)) {
        items = subset;
        n = 2;
        reduced = true;
      }
    }
    for (size_t start = 0; start < len && !reduced && n > 2; start += chunk) {
      std::vector<T> rest(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(start));
      rest.insert(rest.end(), items.begin() + static_cast<std::ptrdiff_t>(std::min(len, start + chunk)), items.end());
      if (test(rest)) {
        items = rest;
        n = std::max<size_t>(n - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (n >= len) break;  // single items, none removable: 1-minimal
    n = std::min(len, 2 * n);
  }
  return items;
}

}  // namespace flce
