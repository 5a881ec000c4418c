#include "fuzz/findings/minimize.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <set>

#include "judge/differential.hpp"

namespace flce {

namespace {

// One simplification: changes the case in place and says what it did ("" = no change).
using Step = std::function<std::string(Case&)>;

template <typename T>
Step set_field(std::string label, T Case::*field, T value) {
  return [=](Case& c) -> std::string {
    if (c.*field == value) return "";
    c.*field = value;
    return label;
  };
}

// Every flag back to its schema default; shape, kind, dtypes, device and seed kept.
void default_flags(Case& c) {
  Case d;
  d.kind = c.kind;
  d.BT = c.BT, d.H = c.H, d.V = c.V, d.batch = c.batch;
  d.out_variant = c.out_variant;
  d.input_dtype = c.input_dtype, d.weight_dtype = c.weight_dtype, d.accum_dtype = c.accum_dtype;
  d.device = c.device;
  d.seed = c.seed;
  // The subject's contract, not the case's: a shrink that changed it would judge another promise.
  d.semantics = c.semantics, d.grad_filter_eps = c.grad_filter_eps;
  d.grad_weight_split = c.grad_weight_split, d.softmax_dtype = c.softmax_dtype;
  if (c.is_op()) d.requires_grad = c.requires_grad;  // op kinds take no gradients; keep what they say
  c = d;
}

std::vector<Step> flag_steps() {
  std::vector<Step> s;
  s.push_back([](Case& c) -> std::string {
    Case d = c;
    default_flags(d);
    if (d == c) return "";
    c = d;
    return "all flags to defaults";
  });
  s.push_back([](Case& c) -> std::string {
    if (!c.bias) return "";
    c.bias = false;
    c.requires_grad.bias = false;
    return "bias off";
  });
  s.push_back(set_field("ce_weight off", &Case::ce_weight, false));
  s.push_back(set_field("label_smoothing 0", &Case::label_smoothing, 0.0));
  s.push_back(set_field("lse_square_scale 0", &Case::lse_square_scale, 0.0));
  s.push_back(set_field("softcap off", &Case::softcap, std::optional<double>{}));
  s.push_back(set_field("use_token_scaling off", &Case::use_token_scaling, false));
  s.push_back(set_field("reduction mean", &Case::reduction, Reduction::MEAN));
  s.push_back(set_field("grad_output 1", &Case::grad_output, 1.0));
  s.push_back(set_field("token_grad random", &Case::token_grad, TokenGrad::RANDOM));
  s.push_back(set_field("return_z_loss off", &Case::return_z_loss, false));
  s.push_back(set_field("return_token_accuracy off", &Case::return_token_accuracy, false));
  s.push_back(set_field("return_predicted_tokens off", &Case::return_predicted_tokens, false));
  s.push_back(set_field("ignore_fraction 0", &Case::ignore_fraction, 0.0));
  s.push_back(set_field("ignore_index -100", &Case::ignore_index, int64_t{-100}));
  s.push_back(set_field("regime normal", &Case::regime, Regime::NORMAL));
  s.push_back(set_field("autocast none", &Case::autocast, Autocast::NONE));
  s.push_back(set_field("extra_BT removed", &Case::extra_BT, std::vector<int64_t>{}));
  s.push_back([](Case& c) -> std::string {  // if all cannot go, one fewer
    if (c.extra_BT.size() < 2) return "";
    c.extra_BT.pop_back();
    return "last extra_BT removed";
  });
  s.push_back([](Case& c) -> std::string {
    if (c.is_op() || (c.requires_grad.input && c.requires_grad.weight)) return "";
    c.requires_grad.input = c.requires_grad.weight = true;
    return "requires_grad defaults";
  });
  s.push_back(set_field("compile options defaults", &Case::compile, CompileOptions{}));
  auto compile_field = [](std::string label, auto CompileOptions::*field, auto value) -> Step {
    return [=](Case& c) -> std::string {
      if (c.compile.*field == value) return "";
      c.compile.*field = value;
      return label;
    };
  };
  s.push_back(compile_field("compile.mode default", &CompileOptions::mode, CompileMode::DEFAULT));
  s.push_back(compile_field("compile.fullgraph off", &CompileOptions::fullgraph, false));
  s.push_back(compile_field("compile.dynamic null", &CompileOptions::dynamic, std::optional<bool>{}));
  s.push_back(compile_field("compile.capture_scalar_outputs on", &CompileOptions::capture_scalar_outputs, true));
  s.push_back(compile_field("compile.backend inductor", &CompileOptions::backend, Backend::INDUCTOR));
  return s;
}

std::vector<Step> dtype_steps() {
  auto both = [](DType d) -> Step {
    return [=](Case& c) -> std::string {
      if (c.input_dtype == d && c.weight_dtype == d) return "";
      c.input_dtype = c.weight_dtype = d;
      return fmt::format("input/weight dtype {}", dtype_name(d));
    };
  };
  return {
      [](Case& c) -> std::string {
        if (c.weight_dtype == c.input_dtype) return "";
        c.weight_dtype = c.input_dtype;
        return fmt::format("weight dtype {} (as input)", dtype_name(c.input_dtype));
      },
      both(DType::F32), both(DType::BF16),
      [](Case& c) -> std::string {
        if (!c.accum_dtype) return "";
        c.accum_dtype.reset();
        return "accum_dtype none";
      },
  };
}

constexpr std::pair<const char*, int64_t Case::*> kDims[] = {
    {"BT", &Case::BT}, {"V", &Case::V}, {"H", &Case::H}, {"batch", &Case::batch}};

}  // namespace

MinimizeResult minimize(const Case& c, const MinimizeOptions& opt) {
  const std::function<double()> now = opt.now ? opt.now : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double t0 = now();
  auto elapsed = [&] { return now() - t0; };
  MinimizeResult res;
  res.original = res.minimized = c;
  std::vector<double> took;  // seconds per run; the next run is assumed as slow as the slowest of the last 3
  auto next_run_s = [&] {
    double s = 0;
    for (size_t i = took.size() > 3 ? took.size() - 3 : 0; i < took.size(); ++i) s = std::max(s, took[i]);
    return s;
  };
  auto run = [&](const Case& k, const std::string& what) {
    const double start = elapsed();
    std::string o = opt.outcome(k);
    took.push_back(elapsed() - start);
    ++res.runs;
    if (opt.trace) opt.trace(fmt::format("run {} ({:.1f} s): {} -> {}", res.runs, took.back(), what, o));
    return o;
  };
  res.outcome = run(c, "original");
  if (res.outcome == "pass" || is_unsupported_outcome(res.outcome))
    throw CaseError("minimize", "the case's outcome here is '" + res.outcome + "': nothing to keep while shrinking");

  Case& cur = res.minimized;
  std::set<std::string> tried{to_json(c, -1)};  // every case run so far (runs are deterministic)
  bool out_of_time = false, changed = false;
  // Run a candidate; keep it if, and only if, its outcome line is identical.
  auto attempt = [&](const Case& cand, const std::string& what) {
    if (out_of_time || what.empty() || cand == cur || !validation_errors(cand).empty()) return false;
    if (elapsed() + next_run_s() > opt.budget_s) {  // the next run would not finish in time
      out_of_time = true;
      return false;
    }
    if (!tried.insert(to_json(cand, -1)).second) return false;  // ran before and was not kept
    if (run(cand, what) != res.outcome) return false;
    cur = cand;
    ++res.accepted;
    changed = true;
    if (opt.log) opt.log(fmt::format("step {} ({:.1f} s, run {}): {}", res.accepted, elapsed(), res.runs, what));
    return true;
  };
  auto apply = [&](const std::vector<Step>& steps) {
    for (auto& step : steps) {
      Case cand = cur;
      std::string what = step(cand);
      attempt(cand, what);
    }
  };
  // A size: 1 first (one run settles most trace-time failures), then halving, then
  // bisecting between the largest size that lost the outcome and the smallest that kept it.
  auto shrink_dim = [&](const char* dim, int64_t Case::*field) {
    auto to = [&](int64_t m, const char* how) {
      Case cand = cur;
      cand.*field = m;
      return attempt(cand, fmt::format("{} {} -> {} ({})", dim, cur.*field, m, how));
    };
    if (cur.*field <= 1 || to(1, "to 1")) return;
    int64_t lo = 1;
    while (cur.*field / 2 > lo && !out_of_time) {
      const int64_t m = cur.*field / 2;
      if (!to(m, "halved")) lo = m;
    }
    while (cur.*field - lo > 1 && !out_of_time) {
      const int64_t m = lo + (cur.*field - lo) / 2;
      if (!to(m, "bisected")) lo = m;
    }
  };
  while (!out_of_time) {
    changed = false;
    apply(flag_steps());
    for (auto& [dim, field] : kDims) shrink_dim(dim, field);
    apply(dtype_steps());
    if (!changed) break;
  }
  res.fixed_point = !out_of_time;
  res.seconds = elapsed();
  return res;
}

}  // namespace flce
