#include "fuzz/findings/cause.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "case/gen.hpp"
#include "case/inputs.hpp"
#include "judge/signature.hpp"

namespace flce {

namespace {

constexpr std::string_view kNumeric[] = {"out-of-bounds", "missing", "nonfinite", "prediction", "dtype", "shape"};

bool starts(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Every target of the case's judged batch is ignored (a fraction below 1 can draw that at a
// small BT): such a case is an all-ignored one, whatever its fraction says. torch-native's
// all-ignored NaN gradients came out twice, [ignore_fraction=all] and, at BT=1, [=some].
bool all_targets_ignored(const Case& c) {
  if (c.ignore_fraction >= 1) return true;
  if (c.ignore_fraction <= 0 || c.is_op()) return false;
  // The judged batch only: extra_BT batches are fed before it to the compiled function, not judged.
  const GenSpec g = make_gen_spec(c, c.BT);
  for (int64_t i = 0; i < g.BT; ++i)
    if (gen_target(g, i) != g.ignore_index) return false;
  return true;
}

std::string dtype_word(DType d) { return std::string(dtype_name(d)); }

// One feature: its name in this case ("" when the case does not have it), how to reset it, and
// whether it shapes the compiled graph (sampler.hpp graph_key) or only what is fed to it.
struct FeatureRule {
  std::function<std::string(const Case&)> name;
  std::function<void(Case&)> reset;
  bool graph = true;
  bool compile_only = false;  // only a compiled run can depend on it
};

const std::vector<FeatureRule>& rules() {
  static const std::vector<FeatureRule> r = {
      {[](const Case& c) {
         if (c.input_dtype == DType::BF16 && c.weight_dtype == DType::BF16) return std::string();
         return c.input_dtype == c.weight_dtype ? "dtype=" + dtype_word(c.input_dtype)
                                                : "dtype=" + dtype_word(c.input_dtype) + "/" + dtype_word(c.weight_dtype);
       },
       [](Case& c) {
         c.input_dtype = c.weight_dtype = DType::BF16;
         c.autocast = Autocast::NONE;  // autocast runs on fp32 parameters
       }},
      {[](const Case& c) { return c.accum_dtype ? "accum_dtype=" + dtype_word(*c.accum_dtype) : std::string(); },
       [](Case& c) { c.accum_dtype.reset(); }},
      {[](const Case& c) { return c.is_op() && !c.out_variant ? std::string("out_variant=false") : std::string(); },
       [](Case& c) { c.out_variant = true; }},
      {[](const Case& c) { return c.bias ? std::string("bias") : std::string(); },
       [](Case& c) { c.bias = c.requires_grad.bias = false; }},
      {[](const Case& c) { return c.ce_weight ? std::string("ce_weight") : std::string(); },
       [](Case& c) {
         c.ce_weight = false;
         if (c.regime == Regime::WEIGHT_SPREAD) c.regime = Regime::NORMAL;  // needs class weights
       }},
      {[](const Case& c) { return c.softcap ? std::string("softcap") : std::string(); }, [](Case& c) { c.softcap.reset(); }},
      {[](const Case& c) { return c.label_smoothing != 0 ? std::string("label_smoothing") : std::string(); },
       [](Case& c) { c.label_smoothing = 0; }},
      {[](const Case& c) { return c.lse_square_scale != 0 ? std::string("lse_square_scale") : std::string(); },
       [](Case& c) { c.lse_square_scale = 0; }},
      {[](const Case& c) { return c.return_z_loss ? std::string("return_z_loss") : std::string(); },
       [](Case& c) { c.return_z_loss = false; }},
      {[](const Case& c) { return c.reduction != Reduction::MEAN ? "reduction=" + std::string(name(c.reduction)) : std::string(); },
       [](Case& c) { c.reduction = Reduction::MEAN; }},
      {[](const Case& c) { return c.return_token_accuracy ? std::string("return_token_accuracy") : std::string(); },
       [](Case& c) { c.return_token_accuracy = false; }},
      {[](const Case& c) { return c.return_predicted_tokens ? std::string("return_predicted_tokens") : std::string(); },
       [](Case& c) { c.return_predicted_tokens = false; }},
      {[](const Case& c) { return c.use_token_scaling ? std::string("use_token_scaling") : std::string(); },
       [](Case& c) { c.use_token_scaling = false; }},
      {[](const Case& c) { return !c.requires_grad.input ? std::string("requires_grad.input=false") : std::string(); },
       [](Case& c) { c.requires_grad.input = true; }},
      {[](const Case& c) { return !c.requires_grad.weight ? std::string("requires_grad.weight=false") : std::string(); },
       [](Case& c) { c.requires_grad.weight = true; }},
      {[](const Case& c) { return c.bias && !c.requires_grad.bias ? std::string("requires_grad.bias=false") : std::string(); },
       [](Case& c) { c.requires_grad.bias = c.bias; }},
      {[](const Case& c) { return c.autocast != Autocast::NONE ? "autocast=" + std::string(name(c.autocast)) : std::string(); },
       [](Case& c) { c.autocast = Autocast::NONE; }},
      {[](const Case& c) { return c.regime == Regime::SPECIAL_VALUES ? std::string("regime=special_values") : std::string(); },
       [](Case& c) { c.regime = Regime::NORMAL; }},
      // What is fed, not traced: never essential to a trace-time error.
      {[](const Case& c) {
         return c.regime != Regime::NORMAL && c.regime != Regime::SPECIAL_VALUES ? "regime=" + std::string(name(c.regime))
                                                                                 : std::string();
       },
       [](Case& c) { c.regime = Regime::NORMAL; }, false},
      {[](const Case& c) {
         if (c.ignore_fraction == 0) return std::string();
         return std::string(all_targets_ignored(c) ? "ignore_fraction=all" : "ignore_fraction=some");
       },
       [](Case& c) { c.ignore_fraction = 0; }, false},
      {[](const Case& c) {
         return c.reduction == Reduction::NONE && c.token_grad != TokenGrad::RANDOM ? "token_grad=" + std::string(name(c.token_grad))
                                                                                    : std::string();
       },
       [](Case& c) { c.token_grad = TokenGrad::RANDOM; }, false},
      {[](const Case& c) { return c.reduction != Reduction::NONE && c.grad_output != 1.0 ? std::string("grad_output") : std::string(); },
       [](Case& c) { c.grad_output = 1.0; }, false},
      // Compile options and shape sequences: only a compiled run sees them.
      {[](const Case& c) { return !c.extra_BT.empty() ? std::string("extra_BT") : std::string(); },
       [](Case& c) { c.extra_BT.clear(); }, true, true},
      {[](const Case& c) {
         return c.compile.backend != Backend::INDUCTOR ? "compile.backend=" + std::string(name(c.compile.backend)) : std::string();
       },
       [](Case& c) {
         c.compile.backend = Backend::INDUCTOR;
       }, true, true},
      {[](const Case& c) { return c.compile.fullgraph ? std::string("compile.fullgraph") : std::string(); },
       [](Case& c) { c.compile.fullgraph = false; }, true, true},
      {[](const Case& c) {
         return c.compile.dynamic ? fmt::format("compile.dynamic={}", *c.compile.dynamic) : std::string();
       },
       [](Case& c) { c.compile.dynamic.reset(); }, true, true},
      {[](const Case& c) { return !c.compile.capture_scalar_outputs ? std::string("compile.capture_scalar_outputs=false") : std::string(); },
       [](Case& c) { c.compile.capture_scalar_outputs = true; }, true, true},
      {[](const Case& c) {
         return c.compile.mode != CompileMode::DEFAULT ? "compile.mode=" + std::string(name(c.compile.mode)) : std::string();
       },
       [](Case& c) { c.compile.mode = CompileMode::DEFAULT; }, true, true},
  };
  return r;
}

// The oracle entries of a report named `oracle` (the compiled run is "compiled", its ladder
// rungs "compiled[<backend>]": only the run itself counts).
template <class F>
void each_oracle(const nlohmann::json& report, const std::string& oracle, F&& f) {
  if (!report.is_object()) return;
  for (auto& o : report.value("oracles", nlohmann::json::array()))
    if (o.is_object() && o.value("oracle", "") == oracle) f(o);
}

}  // namespace

std::optional<FailureClass> failure_class(const std::string& outcome) {
  if (outcome.empty() || outcome == "pass" || starts(outcome, "unsupported") || starts(outcome, "crash:") ||
      starts(outcome, "timeout@") || starts(outcome, "oom@") || starts(outcome, "flce-error@"))
    return std::nullopt;
  const size_t at = outcome.rfind('@');
  if (at == std::string::npos || at == 0) return std::nullopt;
  FailureClass f;
  if (starts(outcome, "judge:")) {  // judge:<output>:<finding>@<oracle>
    const std::string body = outcome.substr(6, at - 6);
    const size_t c = body.rfind(':');
    if (c == std::string::npos) return std::nullopt;
    f.kind = body.substr(c + 1);
    f.oracle = outcome.substr(at + 1);
    f.numeric = true;
    if (std::find(std::begin(kNumeric), std::end(kNumeric), f.kind) == std::end(kNumeric)) return std::nullopt;
  } else {  // <signature>@<oracle>:<stage>
    const size_t first_at = outcome.find('@');
    f.kind = outcome.substr(0, first_at);
    const std::string where = outcome.substr(first_at + 1);
    f.oracle = where.substr(0, where.find(':'));
  }
  if (f.kind.empty() || f.oracle.empty()) return std::nullopt;
  f.key = f.kind + "@" + f.oracle;
  return f;
}

std::map<std::string, double> failing_outputs(const FailureClass& f, const nlohmann::json& report) {
  std::map<std::string, double> out;
  if (!f.numeric) return out;
  each_oracle(report, f.oracle, [&](const nlohmann::json& o) {
    for (auto& v : o.value("outputs", nlohmann::json::array()))
      if (v.is_object() && v.value("finding", "ok") == f.kind) {
        const nlohmann::json r = v.value("err_over_bound", nlohmann::json());
        out[v.value("output", "?")] = r.is_number() ? r.get<double>() : 0.0;
      }
  });
  return out;
}

double worst_ratio(const FailureClass& f, const nlohmann::json& report) {
  double w = 0;
  for (auto& [name, r] : failing_outputs(f, report)) w = std::max(w, r);
  return w;
}

double oracle_worst_ratio(const FailureClass& f, const nlohmann::json& report) {
  double w = 0;
  each_oracle(report, f.oracle, [&](const nlohmann::json& o) {
    for (auto& v : o.value("outputs", nlohmann::json::array()))
      if (v.is_object() && v.contains("err_over_bound") && v["err_over_bound"].is_number())
        w = std::max(w, v["err_over_bound"].get<double>());
  });
  return w;
}

bool shows(const FailureClass& f, const std::string& outcome, const nlohmann::json& report) {
  if (f.numeric) return !failing_outputs(f, report).empty();
  bool raised = false;
  each_oracle(report, f.oracle, [&](const nlohmann::json& o) {
    if (o.value("status", "") == "error" && o.contains("signature") && o["signature"].value("id", "") == f.kind) raised = true;
  });
  // A crash report carries no oracles; the outcome line may still name the signature.
  if (const auto c = failure_class(outcome); c && !c->numeric && c->kind == f.kind && c->oracle == f.oracle) raised = true;
  return raised;
}

std::vector<Ablation> ablations(const Case& c, const FailureClass& f) {
  std::vector<Ablation> out;
  for (auto& r : rules()) {
    const std::string n = r.name(c);
    // A CUDA fault is raised when a kernel runs, not when the graph is traced: the values fed
    // (ignored targets, one-class targets) may be what sends it out of bounds, so they are tried
    // too. (Two compiled Liger faults were keyed [ce_weight] and [softcap] with only those tried.)
    const bool run_time = f.numeric || is_cuda_fault_signature(f.kind);
    if (n.empty() || (!run_time && !r.graph) || (r.compile_only && f.oracle != "compiled")) continue;
    Case reset = c;
    r.reset(reset);
    if (reset == c || !validation_errors(reset).empty()) continue;  // nothing to take away, or not a case
    out.push_back({n, std::move(reset)});
  }
  return out;
}

std::optional<Case> reset_feature(const Case& c, const std::string& feature) {
  for (auto& r : rules())
    if (r.name(c) == feature) {
      Case reset = c;
      r.reset(reset);
      if (reset == c || !validation_errors(reset).empty()) return std::nullopt;
      return reset;
    }
  return std::nullopt;
}

std::vector<std::string> features(const Case& c) {
  std::vector<std::string> out;
  for (auto& r : rules())
    if (std::string n = r.name(c); !n.empty()) out.push_back(n);
  return out;
}

std::string cause_key(const std::string& failure, std::vector<std::string> essential) {
  std::sort(essential.begin(), essential.end());
  std::string s = failure + "[";
  for (size_t i = 0; i < essential.size(); ++i) s += (i ? "," : "") + essential[i];
  return s + "]";
}

bool carries(const Case& c, const std::vector<std::string>& essential) {
  const std::vector<std::string> have = features(c);
  return std::all_of(essential.begin(), essential.end(),
                     [&](const std::string& e) { return std::find(have.begin(), have.end(), e) != have.end(); });
}

Case with_fresh_seed(const Case& c, int k) {
  Case n = c;
  uint64_t h = c.seed ^ 0x9E3779B97F4A7C15ull;
  for (int i = 0; i <= k; ++i) h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  n.seed = h % 1000000007ull;
  if (n.seed == c.seed) n.seed = (n.seed + 1) % 1000000007ull;
  return n;
}

}  // namespace flce
