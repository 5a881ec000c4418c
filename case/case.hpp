// Case: one fully specified FLCE (or op-level dtype_out) call, its compile options,
// value regime and seed. Canonical JSON: every field explicit, fixed key order,
// exact round trip. See corpus/README.md for the schema.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "case/dtype.hpp"

namespace flce {

inline constexpr int kSchemaVersion = 1;

// kind: a whole FLCE call, or one member of the aten dtype_out op family.
enum class Kind : uint8_t { FLCE, MM, ADDMM, BMM, BADDBMM };
enum class Reduction : uint8_t { MEAN, SUM, NONE };
// random: uniform in [0.5, 1.5); log_spread: log-uniform over 2^-14 .. 2^14 (case/gen.hpp).
enum class TokenGrad : uint8_t { ONES, RANDOM, LOG_SPREAD };
enum class Autocast : uint8_t { NONE, F16, BF16 };
enum class Device : uint8_t { CPU, CUDA };
// one_class: every non-ignored target is one class; weight_spread: ce_weight log-uniform over
// 2^-14 .. 2^14 (needs ce_weight). See corpus/README.md and judge/MATH.md (Inputs).
enum class Regime : uint8_t { NORMAL, LARGE_LOGITS, CONFIDENT, SPECIAL_VALUES, ONE_CLASS, WEIGHT_SPREAD };
// What a subject promises (its contract, subjects/flce_subjects/contract.py), on the two axes
// where FLCE implementations differ by design (judge/MATH.md, "Semantics"):
// liger: Liger-Kernel's (all-ignored mean -> 0, z-loss unweighted, fp32 loss);
// torch: torch.nn.functional.cross_entropy's over the logits as computed (all-ignored mean ->
//   NaN, the loss in the logits' dtype): F.linear_cross_entropy;
// torch-fp32: cross_entropy over the logits upcast to fp32 (all-ignored mean -> NaN, fp32 loss):
//   cut-cross-entropy documents `F.cross_entropy((e @ c.T).float(), targets)`.
enum class Semantics : uint8_t { LIGER, TORCH, TORCH_FP32 };
enum class Backend : uint8_t { EAGER, AOT_EAGER, AOT_EAGER_DECOMP_PARTITION, INDUCTOR };
enum class CompileMode : uint8_t { DEFAULT, REDUCE_OVERHEAD, MAX_AUTOTUNE, MAX_AUTOTUNE_NO_CUDAGRAPHS };

struct RequiresGrad {
  bool input = true, weight = true;
  bool bias = false;  // must be false when Case::bias is false; JSON defaults it to Case::bias
  bool operator==(const RequiresGrad&) const = default;
};

struct CompileOptions {
  Backend backend = Backend::INDUCTOR;
  bool fullgraph = false;
  std::optional<bool> dynamic;  // null = torch's default (automatic dynamic)
  bool capture_scalar_outputs = true;
  CompileMode mode = CompileMode::DEFAULT;
  bool operator==(const CompileOptions&) const = default;
};

struct Case {
  Kind kind = Kind::FLCE;
  int64_t BT = 8, H = 16, V = 32;
  int64_t batch = 1;         // bmm/baddbmm only
  bool out_variant = true;   // op kinds: pass out= (the .dtype_out overload)
  DType input_dtype = DType::BF16, weight_dtype = DType::BF16;
  std::optional<DType> accum_dtype;  // none or fp32
  bool bias = false, ce_weight = false;
  int64_t ignore_index = -100;
  double ignore_fraction = 0.0;
  double label_smoothing = 0.0, lse_square_scale = 0.0;
  std::optional<double> softcap;
  Reduction reduction = Reduction::MEAN;
  double grad_output = 1.0;               // upstream scalar for mean/sum
  TokenGrad token_grad = TokenGrad::RANDOM;  // per-token upstream for none
  bool return_z_loss = false, return_token_accuracy = false, return_predicted_tokens = false;
  bool use_token_scaling = false;
  RequiresGrad requires_grad;
  Autocast autocast = Autocast::NONE;
  Device device = Device::CPU;
  CompileOptions compile;
  std::vector<int64_t> extra_BT;  // BTs fed to the same compiled function before BT
  Regime regime = Regime::NORMAL;
  Semantics semantics = Semantics::LIGER;
  // A declared approximation of the subject (its contract, judge/MATH.md "Declared
  // approximations"): gradient entries (i, j) with |softmax_ij - onehot_ij| below this may be
  // dropped (cut-cross-entropy's filter_eps). 0: exact, and the canonical JSON omits it.
  double grad_filter_eps = 0.0;
  // The subject's declared weight-gradient form (contract `grad_weight_form`, MATH.md item 12):
  // true when grad_weight/grad_bias are the softmax term minus the target term, contracted and
  // rounded apart (torch's chunked "bulk + correction"). false: G = p - y first; the JSON omits it.
  bool grad_weight_split = false;
  // The subject's declared softmax dtype (contract `softmax_dtype`, MATH.md item 13): "fp32" (the
  // JSON omits it), "logits" (shifted logits, exponentials and softmax stored in the logits dtype),
  // or "acc" (in the accumulation dtype: the logits dtype when accum_dtype is none, else fp32).
  std::string softmax_dtype = "fp32";
  bool softmax_in_logits() const { return softmax_dtype == "logits" || (softmax_dtype == "acc" && !accum_dtype); }
  uint64_t seed = 0;

  bool operator==(const Case&) const = default;
  bool is_op() const { return kind != Kind::FLCE; }
  bool batched() const { return kind == Kind::BMM || kind == Kind::BADDBMM; }
  bool has_accumulator() const { return kind == Kind::ADDMM || kind == Kind::BADDBMM; }
  // dtype the op-level output is produced in (out_dtype)
  DType op_out_dtype() const { return accum_dtype.value_or(input_dtype); }
};

// A case that breaks a rule. `field` is the JSON path; message is "field: rule, got X".
struct CaseError : std::runtime_error {
  std::string field;
  CaseError(std::string f, const std::string& rule)
      : std::runtime_error(f + ": " + rule), field(std::move(f)) {}
};

// Throws CaseError for the first broken rule (all rules are listed in corpus/README.md).
void validate(const Case& c);
// Returns every broken rule, not only the first (for `flce case validate`).
std::vector<CaseError> validation_errors(const Case& c);

std::string to_json(const Case& c, int indent = 2);  // canonical form
Case from_json(const std::string& text);              // parse + validate; throws CaseError
Case from_json_file(const std::string& path);
Case example_case();  // the embedded default: Liger issue #1327's seed configuration

std::string_view name(Kind), name(Reduction), name(TokenGrad), name(Autocast), name(Device),
    name(Regime), name(Semantics), name(Backend), name(CompileMode);

std::optional<Semantics> parse_semantics(std::string_view s);  // "liger", "torch", "torch-fp32"

// dtype of the returned loss: fp32 under liger and torch-fp32, the logits' dtype under torch.
DType loss_dtype(const Case& c);
// A mean over no rows (every target ignored) is 0/0 = NaN: torch's semantics, either form.
inline bool nan_if_all_ignored(const Case& c) { return c.semantics != Semantics::LIGER; }

// What "smaller" means, for shrinking (fuzz/findings/minimize.hpp) and for the short reproducer's
// limit (repro/short_repro.hpp): total input elements plus non-default fields.
struct CaseSize {
  int64_t elements = 0;  // all input tensors
  int non_default = 0;   // fields that differ from the schema defaults (seed and device aside)
};
CaseSize case_size(const Case& c);

}  // namespace flce
