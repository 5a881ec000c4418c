#include "case/case.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

namespace flce {
namespace {

using json = nlohmann::ordered_json;

template <class E>
struct EnumNames {
  E value;
  std::string_view text;
};

constexpr EnumNames<Kind> kKinds[] = {
    {Kind::FLCE, "flce"}, {Kind::MM, "mm"}, {Kind::ADDMM, "addmm"}, {Kind::BMM, "bmm"}, {Kind::BADDBMM, "baddbmm"}};
constexpr EnumNames<Reduction> kReductions[] = {
    {Reduction::MEAN, "mean"}, {Reduction::SUM, "sum"}, {Reduction::NONE, "none"}};
constexpr EnumNames<TokenGrad> kTokenGrads[] = {
    {TokenGrad::ONES, "ones"}, {TokenGrad::RANDOM, "random"}, {TokenGrad::LOG_SPREAD, "log_spread"}};
constexpr EnumNames<Autocast> kAutocasts[] = {{Autocast::NONE, "none"}, {Autocast::F16, "fp16"}, {Autocast::BF16, "bf16"}};
constexpr EnumNames<Device> kDevices[] = {{Device::CPU, "cpu"}, {Device::CUDA, "cuda"}};
constexpr EnumNames<Regime> kRegimes[] = {{Regime::NORMAL, "normal"},
                                           {Regime::LARGE_LOGITS, "large_logits"},
                                           {Regime::CONFIDENT, "confident"},
                                           {Regime::SPECIAL_VALUES, "special_values"},
                                           {Regime::ONE_CLASS, "one_class"},
                                           {Regime::WEIGHT_SPREAD, "weight_spread"}};
constexpr EnumNames<Semantics> kSemantics[] = {
    {Semantics::LIGER, "liger"}, {Semantics::TORCH, "torch"}, {Semantics::TORCH_FP32, "torch-fp32"}};
constexpr EnumNames<Backend> kBackends[] = {{Backend::EAGER, "eager"},
                                             {Backend::AOT_EAGER, "aot_eager"},
                                             {Backend::AOT_EAGER_DECOMP_PARTITION, "aot_eager_decomp_partition"},
                                             {Backend::INDUCTOR, "inductor"}};
constexpr EnumNames<CompileMode> kModes[] = {{CompileMode::DEFAULT, "default"},
                                              {CompileMode::REDUCE_OVERHEAD, "reduce-overhead"},
                                              {CompileMode::MAX_AUTOTUNE, "max-autotune"},
                                              {CompileMode::MAX_AUTOTUNE_NO_CUDAGRAPHS, "max-autotune-no-cudagraphs"}};

template <class E, size_t N>
std::string_view enum_name(const EnumNames<E> (&t)[N], E v) {
  for (auto& e : t)
    if (e.value == v) return e.text;
  return "?";
}

template <class E, size_t N>
std::string choices(const EnumNames<E> (&t)[N]) {
  std::string s;
  for (auto& e : t) s += (s.empty() ? "" : ", ") + std::string(e.text);
  return s;
}

std::string show(const json& j) { return j.dump(); }

// Reads one object's fields; every key must be consumed, so unknown fields are errors.
class Reader {
 public:
  Reader(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {
    if (!obj_.is_object()) throw CaseError(prefix_.empty() ? "case" : prefix_.substr(0, prefix_.size() - 1),
                                           "must be a JSON object, got " + show(obj_));
  }
  std::string path(const std::string& k) const { return prefix_ + k; }
  const json* get(const std::string& k) {
    seen_.push_back(k);
    auto it = obj_.find(k);
    return it == obj_.end() ? nullptr : &*it;
  }
  void integer(const std::string& k, int64_t& out) {
    if (auto* j = get(k)) {
      if (!j->is_number_integer()) throw CaseError(path(k), "must be an integer, got " + show(*j));
      if (j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        throw CaseError(path(k), "must fit in int64, got " + show(*j));
      out = j->get<int64_t>();
    }
  }
  void unsigned64(const std::string& k, uint64_t& out) {
    if (auto* j = get(k)) {
      if (!j->is_number_integer() || (j->is_number_integer() && !j->is_number_unsigned() && j->get<int64_t>() < 0))
        throw CaseError(path(k), "must be a non-negative integer, got " + show(*j));
      out = j->get<uint64_t>();
    }
  }
  void number(const std::string& k, double& out) {
    if (auto* j = get(k)) {
      if (!j->is_number()) throw CaseError(path(k), "must be a number, got " + show(*j));
      out = j->get<double>();
    }
  }
  void string(const std::string& k, std::string& out) {
    if (auto* j = get(k)) {
      if (!j->is_string()) throw CaseError(path(k), "must be a string, got " + show(*j));
      out = j->get<std::string>();
    }
  }
  void boolean(const std::string& k, bool& out) {
    if (auto* j = get(k)) {
      if (!j->is_boolean()) throw CaseError(path(k), "must be true or false, got " + show(*j));
      out = j->get<bool>();
    }
  }
  template <class E, size_t N>
  void enumeration(const std::string& k, const EnumNames<E> (&t)[N], E& out) {
    if (auto* j = get(k)) {
      if (j->is_string())
        for (auto& e : t)
          if (e.text == j->get<std::string>()) {
            out = e.value;
            return;
          }
      throw CaseError(path(k), "must be one of " + choices(t) + ", got " + show(*j));
    }
  }
  void dtype(const std::string& k, DType& out, bool allow_none, std::optional<DType>* opt = nullptr) {
    if (auto* j = get(k)) {
      std::string allowed = allow_none ? "none, fp32" : "fp32, fp16, bf16";
      if (j->is_string()) {
        auto s = j->get<std::string>();
        if (allow_none) {
          if (s == "none") { *opt = std::nullopt; return; }
          if (s == "fp32") { *opt = DType::F32; return; }
        } else if (auto d = parse_dtype(s); d && (*d == DType::F32 || *d == DType::F16 || *d == DType::BF16)) {
          out = *d;
          return;
        }
      }
      throw CaseError(path(k), "must be one of " + allowed + ", got " + show(*j));
    }
  }
  void finish() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
        throw CaseError(path(it.key()), "unknown field (schema version " + std::to_string(kSchemaVersion) + ")");
  }

 private:
  const json& obj_;
  std::string prefix_;
  std::vector<std::string> seen_;
};

std::string fmt_num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string_view name(Kind v) { return enum_name(kKinds, v); }
std::string_view name(Reduction v) { return enum_name(kReductions, v); }
std::string_view name(TokenGrad v) { return enum_name(kTokenGrads, v); }
std::string_view name(Autocast v) { return enum_name(kAutocasts, v); }
std::string_view name(Device v) { return enum_name(kDevices, v); }
std::string_view name(Regime v) { return enum_name(kRegimes, v); }
std::string_view name(Semantics v) { return enum_name(kSemantics, v); }
std::optional<Semantics> parse_semantics(std::string_view s) {
  for (auto& e : kSemantics)
    if (s == e.text) return e.value;
  return std::nullopt;
}
std::string_view name(Backend v) { return enum_name(kBackends, v); }
std::string_view name(CompileMode v) { return enum_name(kModes, v); }

std::vector<CaseError> validation_errors(const Case& c) {
  std::vector<CaseError> errs;
  auto rule = [&](bool ok, const char* field, const std::string& text) {
    if (!ok) errs.emplace_back(field, text);
  };
  constexpr int64_t kMaxDim = int64_t(1) << 31;
  rule(c.BT >= 1, "BT", fmt::format("must be >= 1, got {}", c.BT));
  rule(c.H >= 1, "H", fmt::format("must be >= 1, got {}", c.H));
  rule(c.V >= 1, "V", fmt::format("must be >= 1, got {}", c.V));
  rule(c.batch >= 1, "batch", fmt::format("must be >= 1, got {}", c.batch));
  rule(c.BT <= kMaxDim && c.H <= kMaxDim && c.V <= kMaxDim, "BT",
       "BT, H and V must each be <= 2^31");
  if (c.BT >= 1 && c.H >= 1 && c.V >= 1 && c.BT <= kMaxDim && c.H <= kMaxDim && c.V <= kMaxDim) {
    // Elements of the largest operand/gradient; beyond this no oracle can hold it.
    int64_t biggest = std::max({c.BT * c.H, c.V * c.H, c.BT * c.V}) * c.batch;
    rule(biggest <= (int64_t(1) << 34), "V",
         fmt::format("largest tensor (max of BT*H, V*H, BT*V, times batch) must be <= 2^34 elements, got {}",
                     biggest));
  }
  if (!c.batched()) rule(c.batch == 1, "batch", fmt::format("must be 1 unless kind is bmm or baddbmm, got {}", c.batch));
  rule(!(c.ignore_index >= 0 && c.ignore_index < c.V), "ignore_index",
       fmt::format("must lie outside [0, V) = [0, {}) so it never equals a real class, got {}", c.V, c.ignore_index));
  rule(c.ignore_fraction >= 0.0 && c.ignore_fraction <= 1.0, "ignore_fraction",
       "must be in [0, 1], got " + fmt_num(c.ignore_fraction));
  rule(c.label_smoothing >= 0.0 && c.label_smoothing <= 1.0, "label_smoothing",
       "must be in [0, 1], got " + fmt_num(c.label_smoothing));
  rule(std::isfinite(c.lse_square_scale) && c.lse_square_scale >= 0.0, "lse_square_scale",
       "must be finite and >= 0, got " + fmt_num(c.lse_square_scale));
  if (c.softcap)
    rule(std::isfinite(*c.softcap) && *c.softcap > 0.0, "softcap",
         "must be null or a finite number > 0, got " + fmt_num(*c.softcap));
  rule(std::isfinite(c.grad_filter_eps) && c.grad_filter_eps >= 0.0 && c.grad_filter_eps < 1.0, "grad_filter_eps",
       "must be in [0, 1), got " + fmt_num(c.grad_filter_eps));
  rule(c.grad_filter_eps == 0.0 || c.kind == Kind::FLCE, "grad_filter_eps",
       fmt::format("only meaningful for kind flce, got kind {}", name(c.kind)));
  rule(!c.grad_weight_split || c.kind == Kind::FLCE, "grad_weight_split",
       fmt::format("only meaningful for kind flce, got kind {}", name(c.kind)));
  rule(c.softmax_dtype == "fp32" || c.softmax_dtype == "acc" || c.softmax_dtype == "logits", "softmax_dtype",
       "must be one of fp32, acc, logits, got '" + c.softmax_dtype + "'");
  rule(c.softmax_dtype == "fp32" || c.kind == Kind::FLCE, "softmax_dtype",
       fmt::format("only meaningful for kind flce, got kind {}", name(c.kind)));
  rule(std::isfinite(c.grad_output), "grad_output", "must be finite, got " + fmt_num(c.grad_output));
  rule(!(c.requires_grad.bias && !c.bias), "requires_grad.bias", "must be false when bias is false");
  for (auto bt : c.extra_BT) rule(bt >= 1 && bt <= kMaxDim, "extra_BT", fmt::format("entries must be in [1, 2^31], got {}", bt));
  rule(c.extra_BT.size() <= 8, "extra_BT", fmt::format("at most 8 extra shapes, got {}", c.extra_BT.size()));
  if (c.compile.mode == CompileMode::REDUCE_OVERHEAD || c.compile.mode == CompileMode::MAX_AUTOTUNE ||
      c.compile.mode == CompileMode::MAX_AUTOTUNE_NO_CUDAGRAPHS)
    rule(c.compile.backend == Backend::INDUCTOR, "compile.mode",
         fmt::format("mode {} needs backend inductor, got {}", name(c.compile.mode), name(c.compile.backend)));
  if (c.is_op()) {
    // Op-level cases exercise one GEMM; CE options would be silently meaningless.
    auto ce_default = [&](bool is_default, const char* field) {
      rule(is_default, field, fmt::format("only meaningful for kind flce, got kind {}", name(c.kind)));
    };
    ce_default(!c.bias && !c.ce_weight, "bias");
    ce_default(c.label_smoothing == 0.0 && c.lse_square_scale == 0.0 && !c.softcap, "label_smoothing");
    ce_default(c.ignore_fraction == 0.0, "ignore_fraction");
    ce_default(!c.return_z_loss && !c.return_token_accuracy && !c.return_predicted_tokens && !c.use_token_scaling,
               "return_z_loss");
    ce_default(c.reduction == Reduction::MEAN, "reduction");
    rule(c.input_dtype == c.weight_dtype, "weight_dtype",
         fmt::format("op kinds take both operands in one dtype: must equal input_dtype {}, got {}",
                     dtype_name(c.input_dtype), dtype_name(c.weight_dtype)));
    rule(!c.out_variant || c.kind == Kind::ADDMM || c.kind == Kind::BADDBMM || c.kind == Kind::MM ||
             c.kind == Kind::BMM,
         "out_variant", "unsupported");
  }
  if (c.accum_dtype) rule(*c.accum_dtype == DType::F32, "accum_dtype", "must be none or fp32");
  rule(c.regime != Regime::WEIGHT_SPREAD || c.ce_weight, "regime", "weight_spread spreads ce_weight: needs ce_weight true");
  rule(!(c.is_op() && (c.regime == Regime::ONE_CLASS || c.regime == Regime::WEIGHT_SPREAD)), "regime",
       fmt::format("{} has no meaning for kind {}", name(c.regime), name(c.kind)));
  return errs;
}

void validate(const Case& c) {
  auto errs = validation_errors(c);
  if (!errs.empty()) throw errs.front();
}

std::string to_json(const Case& c, int indent) {
  json j;
  j["schema_version"] = kSchemaVersion;
  j["kind"] = name(c.kind);
  j["BT"] = c.BT;
  j["H"] = c.H;
  j["V"] = c.V;
  j["batch"] = c.batch;
  j["out_variant"] = c.out_variant;
  j["input_dtype"] = dtype_name(c.input_dtype);
  j["weight_dtype"] = dtype_name(c.weight_dtype);
  j["accum_dtype"] = c.accum_dtype ? std::string(dtype_name(*c.accum_dtype)) : "none";
  j["bias"] = c.bias;
  j["ce_weight"] = c.ce_weight;
  j["ignore_index"] = c.ignore_index;
  j["ignore_fraction"] = c.ignore_fraction;
  j["label_smoothing"] = c.label_smoothing;
  j["lse_square_scale"] = c.lse_square_scale;
  j["softcap"] = c.softcap ? json(*c.softcap) : json(nullptr);
  j["reduction"] = name(c.reduction);
  j["grad_output"] = c.grad_output;
  j["token_grad"] = name(c.token_grad);
  j["return_z_loss"] = c.return_z_loss;
  j["return_token_accuracy"] = c.return_token_accuracy;
  j["return_predicted_tokens"] = c.return_predicted_tokens;
  j["use_token_scaling"] = c.use_token_scaling;
  j["requires_grad"] = {{"input", c.requires_grad.input}, {"weight", c.requires_grad.weight}, {"bias", c.requires_grad.bias}};
  j["autocast"] = name(c.autocast);
  j["device"] = name(c.device);
  json comp;
  comp["backend"] = name(c.compile.backend);
  comp["fullgraph"] = c.compile.fullgraph;
  comp["dynamic"] = c.compile.dynamic ? json(*c.compile.dynamic) : json(nullptr);
  comp["capture_scalar_outputs"] = c.compile.capture_scalar_outputs;
  comp["mode"] = name(c.compile.mode);
  j["compile"] = comp;
  j["extra_BT"] = c.extra_BT;
  j["regime"] = name(c.regime);
  j["semantics"] = name(c.semantics);
  if (c.grad_filter_eps > 0) j["grad_filter_eps"] = c.grad_filter_eps;  // exact cases: absent
  if (c.grad_weight_split) j["grad_weight_split"] = true;                 // fused cases: absent
  if (c.softmax_dtype != "fp32") j["softmax_dtype"] = c.softmax_dtype;    // fp32 softmax: absent
  j["seed"] = c.seed;
  return j.dump(indent);
}

Case from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse errors and number overflow (e.g. 1e400)
    throw CaseError("case", std::string("is not valid JSON: ") + e.what());
  }
  Case c;
  Reader r(j, "");
  int64_t version = kSchemaVersion;
  r.integer("schema_version", version);
  if (version != kSchemaVersion)
    throw CaseError("schema_version", fmt::format("must be {}, got {}", kSchemaVersion, version));
  r.enumeration("kind", kKinds, c.kind);
  r.integer("BT", c.BT);
  r.integer("H", c.H);
  r.integer("V", c.V);
  r.integer("batch", c.batch);
  r.boolean("out_variant", c.out_variant);
  r.dtype("input_dtype", c.input_dtype, false);
  r.dtype("weight_dtype", c.weight_dtype, false);
  DType unused{};
  r.dtype("accum_dtype", unused, true, &c.accum_dtype);
  r.boolean("bias", c.bias);
  r.boolean("ce_weight", c.ce_weight);
  r.integer("ignore_index", c.ignore_index);
  r.number("ignore_fraction", c.ignore_fraction);
  r.number("label_smoothing", c.label_smoothing);
  r.number("lse_square_scale", c.lse_square_scale);
  if (auto* s = r.get("softcap"); s && !s->is_null()) {
    if (!s->is_number()) throw CaseError("softcap", "must be null or a number, got " + show(*s));
    c.softcap = s->get<double>();
  }
  r.enumeration("reduction", kReductions, c.reduction);
  r.number("grad_output", c.grad_output);
  r.enumeration("token_grad", kTokenGrads, c.token_grad);
  r.boolean("return_z_loss", c.return_z_loss);
  r.boolean("return_token_accuracy", c.return_token_accuracy);
  r.boolean("return_predicted_tokens", c.return_predicted_tokens);
  r.boolean("use_token_scaling", c.use_token_scaling);
  if (auto* rg = r.get("requires_grad")) {
    Reader g(*rg, "requires_grad.");
    g.boolean("input", c.requires_grad.input);
    g.boolean("weight", c.requires_grad.weight);
    g.boolean("bias", c.requires_grad.bias);
    g.finish();
  }
  // requires_grad.bias defaults to `bias` when the object does not say otherwise.
  if (!j.contains("requires_grad") || !j["requires_grad"].is_object() || !j["requires_grad"].contains("bias"))
    c.requires_grad.bias = c.bias;
  r.enumeration("autocast", kAutocasts, c.autocast);
  r.enumeration("device", kDevices, c.device);
  if (auto* cj = r.get("compile")) {
    Reader g(*cj, "compile.");
    g.enumeration("backend", kBackends, c.compile.backend);
    g.boolean("fullgraph", c.compile.fullgraph);
    if (auto* d = g.get("dynamic"); d && !d->is_null()) {
      if (!d->is_boolean()) throw CaseError("compile.dynamic", "must be null, true or false, got " + show(*d));
      c.compile.dynamic = d->get<bool>();
    }
    g.boolean("capture_scalar_outputs", c.compile.capture_scalar_outputs);
    g.enumeration("mode", kModes, c.compile.mode);
    g.finish();
  }
  if (auto* e = r.get("extra_BT")) {
    if (!e->is_array()) throw CaseError("extra_BT", "must be an array of integers, got " + show(*e));
    for (auto& v : *e) {
      if (!v.is_number_integer()) throw CaseError("extra_BT", "entries must be integers, got " + show(v));
      c.extra_BT.push_back(v.get<int64_t>());
    }
  }
  r.enumeration("regime", kRegimes, c.regime);
  r.enumeration("semantics", kSemantics, c.semantics);
  r.number("grad_filter_eps", c.grad_filter_eps);
  r.boolean("grad_weight_split", c.grad_weight_split);
  r.string("softmax_dtype", c.softmax_dtype);
  r.unsigned64("seed", c.seed);
  r.finish();
  validate(c);
  return c;
}

Case from_json_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw CaseError(path, "cannot read the case file");
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return from_json(ss.str());
  } catch (const CaseError& e) {  // the message names the file too: "PATH: field: rule"
    throw CaseError(path, e.what());
  }
}

Case example_case() {
  // Liger issue #1327: bf16 operands, fp32 accumulator, compiled with Inductor.
  Case c;
  c.BT = 8;
  c.H = 16;
  c.V = 32;
  c.input_dtype = c.weight_dtype = DType::BF16;
  c.accum_dtype = DType::F32;
  c.seed = 1327;
  return c;
}

DType loss_dtype(const Case& c) {
  if (c.semantics != Semantics::TORCH) return DType::F32;
  if (c.autocast == Autocast::BF16) return DType::BF16;
  if (c.autocast == Autocast::F16) return DType::F16;
  return c.input_dtype;
}

CaseSize case_size(const Case& c) {
  CaseSize s;
  const int64_t rows = c.batch * c.BT;
  if (c.is_op()) {
    s.elements = c.batch * c.V * c.BT + rows * c.H + (c.has_accumulator() ? c.batch * c.V * c.H : 0);
  } else {
    s.elements = (c.BT + [&] {
      int64_t e = 0;
      for (auto b : c.extra_BT) e += b;
      return e;
    }()) * (c.H + 2) + c.V * c.H + (c.bias ? c.V : 0) + (c.ce_weight ? c.V : 0);
  }
  Case d;
  d.kind = c.kind;
  d.BT = c.BT, d.H = c.H, d.V = c.V;
  d.seed = c.seed;
  d.device = c.device;
  d.requires_grad.bias = c.bias;  // follows bias by default
  s.non_default = (c.batch != d.batch) + (c.out_variant != d.out_variant) + (c.input_dtype != d.input_dtype) +
                  (c.weight_dtype != d.weight_dtype) + (c.accum_dtype != d.accum_dtype) + (c.bias != d.bias) +
                  (c.ce_weight != d.ce_weight) + (c.ignore_index != d.ignore_index) +
                  (c.ignore_fraction != d.ignore_fraction) + (c.label_smoothing != d.label_smoothing) +
                  (c.lse_square_scale != d.lse_square_scale) + (c.softcap != d.softcap) + (c.reduction != d.reduction) +
                  (c.grad_output != d.grad_output) + (c.token_grad != d.token_grad) +
                  (c.return_z_loss != d.return_z_loss) + (c.return_token_accuracy != d.return_token_accuracy) +
                  (c.return_predicted_tokens != d.return_predicted_tokens) +
                  (c.use_token_scaling != d.use_token_scaling) + (c.requires_grad != d.requires_grad) +
                  (c.autocast != d.autocast) + (c.compile != d.compile) + (c.extra_BT != d.extra_BT) +
                  (c.regime != d.regime) + (c.semantics != d.semantics) +
                  (c.grad_filter_eps != d.grad_filter_eps) + (c.grad_weight_split != d.grad_weight_split) +
                  (c.softmax_dtype != d.softmax_dtype);
  return s;
}

}  // namespace flce
