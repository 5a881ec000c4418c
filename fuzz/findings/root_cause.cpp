#include "fuzz/findings/root_cause.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fuzz/findings/cause.hpp"
#include "judge/signature.hpp"
#include "report/write.hpp"

namespace flce {

namespace {

// A failure that shows when kernels run: what one defect can show as several classes.
bool run_time(const FailureClass& c) { return c.numeric || is_cuda_fault_signature(c.kind); }

bool subset(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::all_of(a.begin(), a.end(), [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

bool same_set(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

bool order_dependent(const Finding& f) {
  return f.cause_status == CauseStatus::NOT_RUN && f.cause_note.find("depends on what ran before it") != std::string::npos;
}

std::string features_text(const std::vector<std::string>& fs) {
  return fs.empty() ? "none" : fmt::format("{}", fmt::join(fs, ", "));
}

}  // namespace

void group_root_causes(std::vector<Finding>& findings,
                       const std::function<std::optional<Case>(const Finding&)>& case_of) {
  for (auto& f : findings) f.root.clear(), f.root_why.clear();
  struct Candidate {
    Finding* f;
    FailureClass c;
  };
  std::vector<Candidate> ablated;
  for (auto& f : findings) {
    if (f.cause_status != CauseStatus::ABLATED || f.change != Change::NONE || f.essential.empty()) continue;
    const auto c = failure_class(f.signature);
    if (c && run_time(*c)) ablated.push_back({&f, *c});
  }
  // Roots first: fewest features, then known, then first seen; a root always has no more
  // features than its symptoms.
  std::stable_sort(ablated.begin(), ablated.end(), [](const Candidate& a, const Candidate& b) {
    if (a.f->essential.size() != b.f->essential.size()) return a.f->essential.size() < b.f->essential.size();
    if (a.f->known.empty() != b.f->known.empty()) return !a.f->known.empty();
    return a.f->first_seen_s < b.f->first_seen_s;
  });
  std::vector<Candidate*> roots;
  for (auto& s : ablated) {
    Candidate* root = nullptr;
    // Equal features first (the strongest evidence), then the smallest new root it extends.
    if (s.f->known.empty())  // a known finding keeps its own name
      for (const bool equal : {true, false})
        for (Candidate* r : roots) {
          if (root || r->c.oracle != s.c.oracle || r->c.kind == s.c.kind) continue;
          if (equal ? same_set(r->f->essential, s.f->essential)
                    : r->f->known.empty() && subset(r->f->essential, s.f->essential))
            root = r;
        }
    if (!root) {
      roots.push_back(&s);
      continue;
    }
    s.f->root = root->f->id;
    s.f->root_why = fmt::format(
        "a symptom of `{}`: {} on the same oracle ({}) with {} essential features ({}){}", root->f->cause, s.c.kind,
        s.c.oracle, same_set(root->f->essential, s.f->essential) ? "the same" : "a superset of its",
        features_text(s.f->essential),
        same_set(root->f->essential, s.f->essential) ? "" : "; the extra ones choose how the defect shows");
  }
  // Order-dependent variants: under the root whose features their case carries.
  for (auto& v : findings) {
    if (!order_dependent(v) || v.change != Change::NONE || !v.known.empty()) continue;
    const auto vc = failure_class(v.signature);
    if (!vc || !run_time(*vc)) continue;
    const std::optional<Case> c = case_of(v);
    if (!c) continue;
    const Candidate* best = nullptr;
    for (const Candidate* r : roots) {
      if (r->c.oracle != vc->oracle || !carries(*c, r->f->essential)) continue;
      const bool same_class = r->c.key == vc->key;
      if (!r->f->known.empty() && !same_class) continue;
      if (!best) {
        best = r;
        continue;
      }
      const bool best_same = best->c.key == vc->key;
      if (same_class != best_same ? same_class : r->f->essential.size() > best->f->essential.size()) best = r;
    }
    if (!best) continue;
    v.root = best->f->id;
    v.root_why = fmt::format("an order-dependent variant of `{}`: its case carries that cause's features ({}) and "
                             "passes alone in a fresh worker",
                             best->f->cause, features_text(best->f->essential));
  }
}

void group_root_causes(std::vector<Finding>& findings, const std::filesystem::path& dir) {
  group_root_causes(findings, [&](const Finding& f) -> std::optional<Case> {
    try {
      return from_json(read_text(dir / "findings" / f.id / "case.json"));
    } catch (const std::exception&) {  // unreadable, or a sequence: the variant stays alone
      return std::nullopt;
    }
  });
}

}  // namespace flce
