// The short reproducer's subject call (short_repro.hpp): the forward function as a user writes
// it, one call of it forward and backward with the case's upstream gradient, what the judge
// reads after it, and torch.compile with the case's options.
#include <fmt/format.h>

#include "repro/py_source.hpp"
#include "repro/short_repro.hpp"

namespace flce::short_form {

Call make_call(const Case& c) {
  Call k;
  auto tensor = [&](const std::string& n, bool leaf) {
    k.params.push_back(n);
    k.args.push_back(leaf ? n + "_" : n);
    if (leaf) k.leaves.push_back(n);
  };
  if (c.is_op()) {
    tensor("a", false);
    tensor("b", false);
    if (c.has_accumulator()) tensor("c", false);
    return k;
  }
  const RequiresGrad& rg = c.requires_grad;
  tensor("x", rg.input);
  tensor("w", rg.weight);
  tensor("target", false);
  if (c.bias) tensor("bias", rg.bias);
  if (c.ce_weight) tensor("ce_weight", false);
  k.grads = !k.leaves.empty();
  k.extras = c.return_z_loss || c.return_token_accuracy || c.return_predicted_tokens;
  return k;
}

bool torch_native_path(const std::string& subject, Call* k) {
  static const std::pair<const char*, const char*> kPaths[] = {
      {"torch-native-accurate", "acc_policy=\"accurate\""},
      {"torch-native-balanced", "acc_policy=\"balanced\""},
      {"torch-native-chunk1", "batch_chunk_size=1, chunking_method=None"}};
  if (subject == "torch-native-reference") return k->reference_path = true;
  for (auto& [name, options] : kPaths)
    if (subject == name) {
      k->options = options;
      return true;
    }
  return false;
}

std::vector<std::string> subject_kwargs(const Case& c, const std::string& base, const Call& k) {
  std::vector<std::string> kw;
  if (base == "torch-native") {
    if (c.bias) kw.push_back("linear_bias=bias");
    if (c.ce_weight) kw.push_back("weight=ce_weight");
    if (c.reduction != Reduction::MEAN) kw.push_back(fmt::format("reduction=\"{}\"", name(c.reduction)));
    if (c.ignore_index != -100) kw.push_back(fmt::format("ignore_index={}", c.ignore_index));
    if (c.label_smoothing != 0) kw.push_back("label_smoothing=" + py::float_lit(c.label_smoothing));
    if (k.reference_path) kw.push_back("options=None");  // linear + cross_entropy, the reference path
    else if (c.label_smoothing == 0)  // the chunked path, accumulating in accum_dtype (else torch's own default)
      kw.push_back("options=torch.nn.LinearCrossEntropyOptions(acc_dtype=" +
                   (c.accum_dtype ? py::torch_dtype(*c.accum_dtype) : std::string("None")) +
                   (k.options.empty() ? "" : ", " + k.options) + ")");
    return kw;
  }
  if (base == "cce") {  // cut-cross-entropy, exact (no gradient filtering); its Triton kernels on CUDA
    if (c.ignore_index != -100) kw.push_back(fmt::format("ignore_index={}", c.ignore_index));
    if (c.softcap) kw.push_back("softcap=" + py::float_lit(*c.softcap));
    if (c.reduction != Reduction::MEAN) kw.push_back(fmt::format("reduction=\"{}\"", name(c.reduction)));
    kw.push_back("filter_eps=None");
    kw.push_back(c.device == Device::CUDA ? "impl=\"cce\"" : "impl=\"torch_compile\"");
    return kw;
  }
  if (c.bias) kw.push_back("bias=bias");
  if (c.ce_weight) kw.push_back("ce_weight=ce_weight");
  if (c.ignore_index != -100) kw.push_back(fmt::format("ignore_index={}", c.ignore_index));
  if (c.lse_square_scale != 0) kw.push_back("lse_square_scale=" + py::float_lit(c.lse_square_scale));
  if (c.label_smoothing != 0) kw.push_back("label_smoothing=" + py::float_lit(c.label_smoothing));
  if (c.reduction != Reduction::MEAN) kw.push_back(fmt::format("reduction=\"{}\"", name(c.reduction)));
  if (c.softcap) kw.push_back("softcap=" + py::float_lit(*c.softcap));
  if (c.return_z_loss) kw.push_back("return_z_loss=True");
  if (c.accum_dtype) kw.push_back("accum_dtype=" + py::torch_dtype(*c.accum_dtype));
  if (c.use_token_scaling) kw.push_back("use_token_scaling=True");
  if (c.return_token_accuracy) kw.push_back("return_token_accuracy=True");
  if (c.return_predicted_tokens) kw.push_back("return_predicted_tokens=True");
  return kw;
}

std::vector<std::string> forward_def(const Case& c, const std::string& base, const Call& k) {
  std::vector<std::string> l{py::call("def forward", k.params, 0) + ":"};
  if (c.is_op()) {
    const std::string op = "torch." + std::string(name(c.kind)), od = "out_dtype=" + py::torch_dtype(c.op_out_dtype());
    std::vector<std::string> args = c.has_accumulator() ? std::vector<std::string>{"c", "a", "b", od}
                                                        : std::vector<std::string>{"a", "b", od};
    if (c.out_variant) {  // as flce's aten-dtype-out: into c.clone(), or a fresh tensor of out_dtype
      l.push_back(c.has_accumulator() ? "    out = c.clone()"
                                      : "    out = torch.empty((*a.shape[:-1], b.shape[-1]), dtype=" +
                                            py::torch_dtype(c.op_out_dtype()) + ", device=a.device)");
      if (c.has_accumulator()) args[0] = "out";
      args.push_back("out=out");
    }
    l.push_back("    " + py::call("return " + op, args, 4));
    return l;
  }
  std::vector<std::string> args{"x", "w", "target"};
  for (auto& kw : subject_kwargs(c, base, k)) args.push_back(kw);
  const std::string fn = base == "liger"          ? "liger_fused_linear_cross_entropy"
                         : base == "torch-native" ? "torch.nn.functional.linear_cross_entropy"
                         : base == "cce"          ? "linear_cross_entropy"
                                                  : "flce";
  l.push_back("    " + py::call("return " + fn, args, 4));
  return l;
}

// One call of `fn` (forward, then backward with the case's upstream gradient); `outputs`: keep
// what the judge reads (else only what the backward needs).
std::vector<std::string> call_lines(const Case& c, const std::string& base, const Call& k, bool outputs, int indent) {
  std::vector<std::string> l;
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (!k.leaves.empty()) {
    std::string lhs, rhs;
    for (auto& n : k.leaves) {
      lhs += (lhs.empty() ? "" : ", ") + n + "_";
      rhs += (rhs.empty() ? "" : ", ") + n + ".detach().requires_grad_()";
    }
    l.push_back(pad + lhs + " = " + rhs);
  }
  std::string prefix, suffix;
  if (c.is_op()) prefix = outputs ? "out = " : "";
  else if (!k.grads && !outputs) prefix = "";
  else if (base == "torch-native" || base == "cce" || (base == "liger" && !k.extras)) prefix = "loss = ";
  else if (base == "liger") prefix = outputs ? "result = " : "loss = ", suffix = outputs ? "" : ".loss";
  else if (outputs && k.extras) prefix = "loss, z_loss, token_accuracy, predicted_tokens = ";
  else prefix = "loss = ", suffix = "[0]";
  int at = indent;
  if (c.autocast != Autocast::NONE) {
    l.push_back(pad + fmt::format("with torch.autocast(\"{}\", dtype={}):", name(c.device),
                                  py::torch_dtype(c.autocast == Autocast::BF16 ? DType::BF16 : DType::F16)));
    at += 4;
  }
  l.push_back(std::string(static_cast<size_t>(at), ' ') + py::call(prefix + "fn", k.args, at) + suffix);
  if (base == "liger" && k.extras && outputs) l.push_back(pad + "loss = result.loss");
  if (k.grads) {
    if (c.reduction == Reduction::NONE) l.push_back(pad + "loss.backward(grad_loss.to(loss.dtype))");
    else if (c.grad_output == 1.0) l.push_back(pad + "loss.backward()");
    else l.push_back(pad + "loss.backward(torch.full_like(loss, " + py::float_lit(c.grad_output) + "))");
  }
  return l;
}

// What the judge reads after a call, output by output (golden's names).
std::vector<std::string> got_items(const std::string& base, const Bounds& bounds) {
  std::vector<std::string> items;
  for (auto& [n, t] : bounds.elem) {
    std::string e;
    if (n == "out" || n == "loss") e = n;
    else if (n == "grad_input") e = "x_.grad";
    else if (n == "grad_weight") e = "w_.grad";
    else if (n == "grad_bias") e = "bias_.grad";
    else e = base == "liger" ? "result." + n : n;
    items.push_back(py::lit(n) + ": " + e);
  }
  return items;
}

// torch.compile of forward with the case's options; `backend` is Python text (a literal or a name).
std::string compile_call(const Case& c, const std::string& backend, bool inductor) {
  std::vector<std::string> a{"forward", "backend=" + backend};
  if (c.compile.fullgraph) a.push_back("fullgraph=True");
  if (c.compile.dynamic) a.push_back(std::string("dynamic=") + (*c.compile.dynamic ? "True" : "False"));
  if (inductor && c.compile.mode != CompileMode::DEFAULT)
    a.push_back(fmt::format("mode=\"{}\"", name(c.compile.mode)));
  std::string s = "torch.compile(";
  for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
  return s + ")";
}




}  // namespace flce::short_form
