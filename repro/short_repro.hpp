// The short reproducer: what a Liger or PyTorch maintainer pastes into an issue. For a small
// case (at most kShortReproMaxElements input elements) `flce repro --emit-python` writes the
// inputs as exact literals (tensor_literal.hpp), the subject call as a user writes it, eager and,
// when the outcome involves it, compiled, forward and backward, an fp64 reference in plain torch
// autograd with only the terms the case uses, flce's bounds per element with the name of their
// formula (judge/MATH.md), and REPRODUCED / NOT REPRODUCED with the long script's exit codes.
//
// What it cannot express keeps the long generator-port script (repro_template.py), and
// long_form_reason() says which: larger cases (their literals would be the bulk of the script),
// sequence cases and extra_BT (one compiled function called several times, with Dynamo's
// caching rules), plug-in and crash subjects (loaded and survived by flce's own rules), outcomes
// it cannot name (crashes, timeouts, `unsupported-by-subject:`, `bucket-...` ids, which are
// hashes of torch's message, other oracles), and cases the subject does not run at all.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "case/case.hpp"
#include "case/inputs.hpp"
#include "judge/bounds.hpp"
#include "repro/emit_python.hpp"

namespace flce {

inline constexpr int64_t kShortReproMaxElements = 4096;

// Why the spec needs the long script ("" when the short one expresses it); `sequence`: the
// case is the last call of a sequence case.
std::string long_form_reason(const EmitSpec& spec, bool sequence);

// The short script; throws std::logic_error when long_form_reason() is not empty.
std::string emit_short_python(const EmitSpec& spec);

namespace short_form {

// How the case calls the subject: the forward's parameters (x, w, target[, bias, ce_weight]
// or a, b[, c]), the arguments of one call (leaves as x_, w_, bias_), the leaves that need grad.
struct Call {
  std::vector<std::string> params, leaves, args;
  bool grads = false;   // some leaf requires grad: a backward runs
  bool extras = false;  // z_loss, token_accuracy or predicted_tokens are returned too
  // torch-native's paths (subjects/flce_subjects/torch_native_paths.py): options=None on every
  // case, or what LinearCrossEntropyOptions gets beside acc_dtype (e.g. acc_policy="accurate").
  bool reference_path = false;
  std::string options;
};
Call make_call(const Case& c);

// One of flce's torch-native paths ("torch-native-accurate", ...): sets `k`'s path fields and
// returns true; false for any other subject.
bool torch_native_path(const std::string& subject, Call* k);

// `def forward(...)`: the subject's call with only the keyword arguments the case uses. `base`
// is the subject without "+workaround", and "torch-native" for each of its paths.
std::vector<std::string> forward_def(const Case& c, const std::string& base, const Call& k);
// One call of `fn`, indented by `indent`: leaves, forward (under autocast), backward with the
// case's upstream gradient; `outputs`: keep what the judge reads, else only what backward needs.
std::vector<std::string> call_lines(const Case& c, const std::string& base, const Call& k, bool outputs, int indent);
// The items of `got = {...}` after a call: golden's output names, in name order.
std::vector<std::string> got_items(const std::string& base, const Bounds& bounds);
// torch.compile(forward, ...) with the case's options; `backend` is Python text (a literal or a
// name); `inductor`: the mode applies.
std::string compile_call(const Case& c, const std::string& backend, bool inductor);

// The fp64 reference (module-level Python lines computing it) and, per output, the name of
// the tensor that holds it (as golden() names the outputs).
struct Reference {
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, std::string>> outputs;  // output -> Python expression
};
Reference reference(const Case& c, const Inputs& in);

// The short label of the bound formula of one output (judge/MATH.md), with the case's dtypes
// and reduction lengths filled in, e.g. "[MATH.md 5] sum_i E_ij |x_ik| + (u_fp32 + ...) M".
std::string bound_formula(const Case& c, const std::string& output);

}  // namespace short_form

}  // namespace flce
