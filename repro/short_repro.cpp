// The short reproducer's layout (short_repro.hpp): header, imports and the checks that skip,
// the expected outcome for this torch, the signatures to classify with, the inputs, the call,
// the reference and bounds (short_reference.cpp), the oracle loop and the verdict.
#include "repro/short_repro.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "repro/py_source.hpp"
#include "repro/tensor_literal.hpp"
#include "judge/bounds.hpp"
#include "judge/signature.hpp"

namespace flce {

namespace {

// flce's own subjects (subjects/flce_subjects/registry.py's BUILTIN) the short form imports.
const std::map<std::string, std::string> kFlceSubjects = {
    {"model", "model"},
    {"model-bug-smoothing", "bug_smoothing"},
    {"model-bug-bf16-accum", "bug_bf16_accum"},
    {"model-bug-drop-chunk", "bug_drop_chunk"},
    {"model-bug-second-shape", "bug_second_shape"},
    {"model-bug-trace-error", "bug_trace_error"},
    {"model-bug-token-grad-rows", "bug_token_grad_rows"},
    {"model-bug-autocast-no-bias", "bug_autocast_no_bias"},
    {"model-bug-input-no-grad", "bug_input_no_grad"},
    {"model-bug-two-causes", "bug_two_causes"},
    {"model-dtype-out", "model_dtype_out"},
};
// Failures that need the out_dtype overloads (the long script's DTYPE_OUT_SIGNATURES).
const std::set<std::string> kDtypeOutSignatures = {"tier1-decomposition",  "tier1-baddbmm-decomposition",
                                                   "tier2-lowering",       "op-not-implemented-on-device",
                                                   "out-dtype-unsupported", "out-dtype-invalid",
                                                   "out-tensor-dtype-mismatch"};
using py::lit;
using py::list_of;
using namespace short_form;
constexpr const char* kNoKernel = "op-not-implemented-on-device";
constexpr Backend kLadder[] = {Backend::EAGER, Backend::AOT_EAGER, Backend::AOT_EAGER_DECOMP_PARTITION, Backend::INDUCTOR};

// The subject without "+workaround"; each torch-native path is "torch-native" with `path` set.
std::string base_subject(const std::string& s, bool* workaround, Call* path = nullptr) {
  const std::string suffix = "+workaround";
  *workaround = s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string base = *workaround ? s.substr(0, s.size() - suffix.size()) : s;
  Call scratch;
  return torch_native_path(base, path ? path : &scratch) ? "torch-native" : base;
}

// One alternative of an expected outcome, as far as the short form can name it.
struct Alt {
  enum What { PASS, UNSUPPORTED, JUDGE, SIGNATURE } what = PASS;
  std::string oracle, signature;
};

std::optional<Alt> parse_alt(const std::string& a, const std::set<std::string>& known) {
  if (a == "pass") return Alt{Alt::PASS, "", ""};
  if (a == "unsupported") return Alt{Alt::UNSUPPORTED, "", ""};
  const size_t at = a.rfind('@');
  if (at == std::string::npos) return std::nullopt;
  const std::string head = a.substr(0, at), tail = a.substr(at + 1);
  if (head.rfind("judge:", 0) == 0 && (tail == "eager" || tail == "compiled")) return Alt{Alt::JUDGE, tail, ""};
  if (!known.count(head)) return std::nullopt;
  if (tail == "eager:-") return Alt{Alt::SIGNATURE, "eager", head};
  for (Backend b : kLadder)
    if (tail == "compiled:" + std::string(name(b))) return Alt{Alt::SIGNATURE, "compiled", head};
  return std::nullopt;
}

std::vector<std::string> alternatives(const std::string& outcome) {
  std::vector<std::string> v;
  for (size_t at = 0;;) {
    const size_t end = outcome.find(kOutcomeSeparator, at);
    v.push_back(outcome.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return v;
    at = end + kOutcomeSeparator.size();
  }
}

struct Table {  // the signature table: ids in order, and each one's patterns
  std::vector<std::string> ids;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> patterns;
};

Table signature_table(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (!j.is_array()) throw std::runtime_error("signature table: must be a JSON array");
  Table t;
  for (auto& e : j) {
    const std::string id = e.at("id").get<std::string>();
    t.ids.push_back(id);
    t.patterns[id] = {e.at("patterns").get<std::vector<std::string>>(),
                      e.value("frame_patterns", std::vector<std::string>{})};
  }
  return t;
}

// What the script has to do, decided once from the spec.
struct Plan {
  struct Entry {
    std::string torch, device;
    std::vector<std::string> alts;
  };
  std::vector<Entry> entries;  // without those an earlier entry shadows
  bool fallback = true;        // some torch or device has no entry: any failure reproduces there
  bool compiled = false, ladder = false, dtype_out = false;
  std::vector<std::string> signatures;  // carried, in the table's order
  std::string why_long;
};

bool subject_runs_kind(const std::string& base, const Case& c) {
  return c.is_op() ? base == "aten-dtype-out" : base != "aten-dtype-out";
}

std::string torch_native_lacks(const Case& c, bool reference_path) {
  if (c.return_z_loss || c.lse_square_scale != 0) return "z-loss";
  if (c.softcap) return "softcap";
  if (c.use_token_scaling) return "token scaling";
  if (c.return_token_accuracy) return "token accuracy";
  if (c.return_predicted_tokens) return "predicted tokens";
  const bool low = c.autocast != Autocast::NONE || c.input_dtype != DType::F32;
  if (c.ce_weight && c.label_smoothing > 0 && low) return "label_smoothing+ce_weight with fp16/bf16 logits";
  // Its cross_entropy wants the class weight in the logits' dtype; the case's is fp32.
  if (c.ce_weight && low && reference_path) return "ce_weight with fp16/bf16 logits on the reference path";
  return "";
}

// What cut-cross-entropy's API cannot take (flce reports those cases unsupported), "" if none.
std::string cce_lacks(const Case& c) {
  if (c.bias) return "bias";
  if (c.ce_weight) return "class weights";
  if (c.label_smoothing != 0) return "label smoothing";
  if (c.return_z_loss || c.lse_square_scale != 0) return "z-loss";
  if (c.accum_dtype) return "accum_dtype";
  if (c.use_token_scaling) return "token scaling";
  if (c.return_token_accuracy) return "token accuracy";
  if (c.return_predicted_tokens) return "predicted tokens";
  if (c.device == Device::CUDA && (c.autocast != Autocast::NONE || c.input_dtype == DType::F32))
    return "fp32 embeddings on CUDA (its backward asserts bf16 or fp16)";
  return "";
}

Plan make_plan(const EmitSpec& s, bool sequence) {
  Plan p;
  const Case& c = s.c;
  bool workaround = false;
  Call path;
  const std::string base = base_subject(s.subject, &workaround, &path);
  auto no = [&](std::string why) {
    p.why_long = std::move(why);
    return p;
  };
  if (sequence) return no("a sequence case: its earlier calls share compiled functions with the last one");
  if (!c.extra_BT.empty()) return no("extra_BT: one compiled function is called with several shapes first");
  if (const int64_t n = case_size(c).elements; n > kShortReproMaxElements)
    return no(fmt::format("{} input elements: the short form carries at most {} as literals", n, kShortReproMaxElements));
  if (base == "segfault" || base == "hang" || base == "cuda-oob")
    return no("a crash-test subject: it kills or hangs the process it runs in");
  if (base != "liger" && base != "torch-native" && base != "cce" && base != "aten-dtype-out" && !kFlceSubjects.count(base))
    return no("a plug-in subject: the long form loads it by flce's plug-in rules");
  if (!subject_runs_kind(base, c)) return no("the subject does not run this kind of case (flce: unsupported)");
  if (base == "liger" && c.device != Device::CUDA) return no("liger runs only CUDA cases (flce: unsupported)");
  if (const std::string lacks = torch_native_lacks(c, path.reference_path); base == "torch-native" && !lacks.empty())
    return no("torch-native cannot express " + lacks + " (flce: unsupported)");
  if (base == "cce" && !cce_lacks(c).empty()) return no("cce cannot express " + cce_lacks(c) + " (flce: unsupported)");
  const Table table = signature_table(s.signatures_json);
  const std::set<std::string> known(table.ids.begin(), table.ids.end());
  std::set<std::string> sigs;
  bool shadowed_all = false;
  for (const ExpectedOutcome& e : s.expect) {  // first match wins: later entries for the same range never apply
    const bool dup = std::any_of(p.entries.begin(), p.entries.end(),
                                 [&](const Plan::Entry& x) { return x.torch == e.torch && x.device == e.device; });
    if (shadowed_all || dup) continue;
    Plan::Entry entry{e.torch, e.device, alternatives(e.outcome)};
    for (const std::string& a : entry.alts) {
      const std::optional<Alt> alt = parse_alt(a, known);
      if (!alt) return no("outcome " + a + ": the short form names judge findings and known signatures of eager and compiled");
      p.compiled = p.compiled || alt->what == Alt::PASS || alt->oracle == "compiled";
      if (alt->what == Alt::SIGNATURE) {
        sigs.insert(alt->signature);
        // A CUDA fault loses the process's context: no rung could run after it (flce walks none).
        const bool context_lost = is_cuda_fault_signature(alt->signature);
        p.ladder = p.ladder || (alt->oracle == "compiled" && c.compile.backend != Backend::EAGER && !context_lost);
      }
    }
    p.entries.push_back(entry);
    const bool all_devices = e.device == "any" || (e.device == "cuda" && c.device == Device::CUDA);
    shadowed_all = e.torch.find_first_not_of(" ,") == std::string::npos && all_devices;
  }
  p.fallback = !shadowed_all;
  p.compiled = p.compiled || p.fallback;
  for (const std::string& id : sigs) p.dtype_out = p.dtype_out || kDtypeOutSignatures.count(id);
  p.dtype_out = p.dtype_out || c.is_op();
  // Eager with no kernel for an out_dtype op is "unsupported" to flce, not a finding.
  const bool may_lack_kernel = c.is_op() || c.accum_dtype || base == "model-dtype-out" || p.dtype_out;
  if (may_lack_kernel && p.compiled) sigs.insert(kNoKernel);
  for (const std::string& id : table.ids)
    if (sigs.count(id)) p.signatures.push_back(id);
  return p;
}

// ---------------------------------------------------------------- the case in words, versions as tuples

std::string describe(const Case& c, const Plan& p) {
  std::vector<std::string> f;
  const std::string dt = c.input_dtype == c.weight_dtype
                             ? std::string(dtype_name(c.input_dtype))
                             : fmt::format("x {} / W {}", dtype_name(c.input_dtype), dtype_name(c.weight_dtype));
  if (c.is_op()) {
    f.push_back(fmt::format("{}, {}, M={} K={} N={}{}", name(c.kind), dt, c.V, c.BT, c.H,
                            c.batched() ? fmt::format(" batch={}", c.batch) : ""));
    f.push_back(fmt::format("out_dtype={}{}", dtype_name(c.op_out_dtype()), c.out_variant ? ", out=" : ""));
  } else {
    f.push_back(fmt::format("{}, BT={} H={} V={}", dt, c.BT, c.H, c.V));
    if (c.accum_dtype) f.push_back(fmt::format("accum_dtype={}", dtype_name(*c.accum_dtype)));
    if (c.bias) f.push_back("bias");
    if (c.ce_weight) f.push_back("ce_weight");
    if (c.label_smoothing != 0) f.push_back("label_smoothing=" + py::float_lit(c.label_smoothing));
    if (c.lse_square_scale != 0) f.push_back("lse_square_scale=" + py::float_lit(c.lse_square_scale));
    if (c.softcap) f.push_back("softcap=" + py::float_lit(*c.softcap));
    f.push_back(fmt::format("reduction={}", name(c.reduction)));
    if (c.ignore_fraction > 0) f.push_back(fmt::format("ignore_fraction={}", c.ignore_fraction));
    if (c.use_token_scaling) f.push_back("token scaling");
    if (c.return_z_loss) f.push_back("return_z_loss");
    if (c.return_token_accuracy) f.push_back("return_token_accuracy");
    if (c.return_predicted_tokens) f.push_back("return_predicted_tokens");
    if (!(c.requires_grad == RequiresGrad{true, true, c.bias})) {
      std::string g;
      for (auto [n, on] : {std::pair<const char*, bool>{"input", c.requires_grad.input}, {"weight", c.requires_grad.weight},
                           {"bias", c.bias && c.requires_grad.bias}})
        if (on) g += std::string(g.empty() ? "" : "+") + n;
      f.push_back("grad: " + (g.empty() ? std::string("none") : g));
    }
    if (c.semantics != Semantics::LIGER) f.push_back(fmt::format("{} semantics", name(c.semantics)));
  }
  if (c.autocast != Autocast::NONE) f.push_back(fmt::format("autocast {}", name(c.autocast)));
  if (c.regime != Regime::NORMAL) f.push_back(fmt::format("{} values", name(c.regime)));
  f.push_back(fmt::format("on {}", name(c.device)));
  std::string s;
  for (auto& x : f) s += (s.empty() ? "" : ", ") + x;
  if (p.compiled) {
    s += fmt::format("; torch.compile(backend={}", name(c.compile.backend));
    if (c.compile.fullgraph) s += ", fullgraph=True";
    if (c.compile.dynamic) s += fmt::format(", dynamic={}", *c.compile.dynamic ? "True" : "False");
    if (c.compile.mode != CompileMode::DEFAULT) s += fmt::format(", mode={}", name(c.compile.mode));
    s += ")";
  }
  return s;
}

// (major, minor, patch) of a version's leading numbers, as flce's version_in_range reads them.
std::string version_tuple(std::string v) {
  int part[3] = {0, 0, 0};
  size_t i = 0;
  for (int k = 0; k < 3 && i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++k) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) n = std::min(n * 10 + (v[i++] - '0'), 1L << 30);
    part[k] = static_cast<int>(n);
    if (i < v.size() && v[i] == '.') ++i;
    else break;
  }
  return fmt::format("({}, {}, {})", part[0], part[1], part[2]);
}

// The condition of one expectation entry on this torch and machine ("" when always true).
std::string entry_condition(const Plan::Entry& e, const Case& c) {
  std::vector<std::string> terms;
  size_t at = 0;
  while (at <= e.torch.size()) {
    size_t end = e.torch.find(',', at);
    if (end == std::string::npos) end = e.torch.size();
    std::string clause = e.torch.substr(at, end - at);
    clause.erase(0, clause.find_first_not_of(' '));
    at = end + 1;
    if (clause.empty()) continue;
    std::string op;
    while (!clause.empty() && std::string("<>=!").find(clause[0]) != std::string::npos) {
      op += clause[0];
      clause.erase(0, 1);
    }
    if (op != ">=" && op != ">" && op != "<=" && op != "<" && op != "!=") op = "==";
    terms.push_back(fmt::format("TV {} {}", op, version_tuple(clause)));
  }
  if (terms.size() == 2 && terms[0].rfind("TV >= ", 0) == 0 && terms[1].rfind("TV < ", 0) == 0)  // a <= TV < b
    terms = {terms[0].substr(6) + " <= TV < " + terms[1].substr(5)};
  if (e.device == "cpu") terms.push_back("not torch.cuda.is_available()");
  if (e.device == "cuda" && c.device != Device::CUDA) terms.push_back("torch.cuda.is_available()");
  std::string s;
  for (auto& t : terms) s += (s.empty() ? "" : " and ") + t;
  return s;
}

std::vector<std::string> skip_block(const std::string& condition, const std::string& message_fstring) {
  return {"if " + condition + ":", "    print(" + message_fstring + ")", "    sys.exit(2)"};
}

}  // namespace

std::string long_form_reason(const EmitSpec& spec, bool sequence) { return make_plan(spec, sequence).why_long; }

std::string emit_short_python(const EmitSpec& s) {
  const Plan p = make_plan(s, false);
  if (!p.why_long.empty()) throw std::logic_error("short repro: " + p.why_long);
  const Case& c = s.c;
  bool workaround = false;
  Call k = make_call(c);
  const std::string base = base_subject(s.subject, &workaround, &k);
  const bool cuda = c.device == Device::CUDA, flce_subject = kFlceSubjects.count(base) > 0;
  const std::string dev = cuda ? "cuda" : "cpu", backend(name(c.compile.backend));
  const Inputs in = make_inputs(c);
  const Bounds bounds = compute_bounds(c, in);
  std::vector<std::string> conds;
  for (auto& e : p.entries) conds.push_back(entry_condition(e, c));
  const bool ranges = std::any_of(conds.begin(), conds.end(), [](const std::string& x) { return !x.empty(); });
  const bool classify = !p.signatures.empty();
  const bool special = c.regime == Regime::SPECIAL_VALUES;
  py::Lines w;

  // Header: what this is and how it answers; then the imports.
  std::string head = fmt::format("Reproducer by flce of {}, subject {}: {}. Exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP.",
                                 py::tame(s.source), lit(s.subject), describe(c, p));
  if (flce_subject || workaround) head += " flce's own subject: put <flce>/subjects on PYTHONPATH.";
  w.add(py::comment(head));
  if (ranges || classify) w.add("import re");
  w.add("import sys");
  if (classify) w.add("import traceback");
  w.blank();
  w.add("import torch");
  // Before the subject's import, or the installed copy loads instead of the tree that failed (a
  // path that is not there, on a maintainer's machine, leaves the installed copy to load).
  if (!s.subject_path.empty()) w.add("sys.path.insert(0, " + lit(s.subject_path) + ")  # --subject-path");
  if (base == "liger") w.add("from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy");
  if (base == "cce") w.add("from cut_cross_entropy import linear_cross_entropy");
  w.blank();

  // Where it cannot run: exit 2, as the long script's SKIPs.
  if (cuda) w.add(skip_block("not torch.cuda.is_available()", "\"SKIP: the case runs on CUDA and this torch has no CUDA device\""));
  if (p.dtype_out) {
    const std::string op = c.is_op() ? std::string(name(c.kind)) : "addmm";
    w.add(skip_block(fmt::format("\"dtype_out\" not in torch.ops.aten.{}.overloads()", op),
                     fmt::format("f\"SKIP: torch {{torch.__version__}} has no aten.{}.dtype_out (torch >= 2.8)\"", op)));
    if (base == "liger")
      w.add(skip_block("torch.cuda.get_device_capability()[0] < 8", "\"SKIP: the out_dtype fast path needs compute capability 8.0+\""));
  }
  if (base == "torch-native")
    w.add(skip_block("not hasattr(torch.nn.functional, \"linear_cross_entropy\")",
                     "f\"SKIP: torch {torch.__version__} has no torch.nn.functional.linear_cross_entropy (torch >= 2.13)\""));
  if (flce_subject || workaround) {
    w.add(workaround ? "try:  # flce's own test subject, and flce's workaround (subjects/flce_workaround)" : "try:");
    if (flce_subject) w.add("    from flce_subjects." + kFlceSubjects.at(base) + " import flce");
    if (workaround) w.add("    import flce_workaround");
    w.add("except ImportError as e:");
    w.add("    " + py::call("print", {lit("SKIP: cannot import subject '" + s.subject + "':"), "e",
                                       "\"(flce's own subjects: put <flce>/subjects on PYTHONPATH)\""}, 4));
    w.add("    sys.exit(2)");
    if (workaround) w.add("flce_workaround.enable()  # the subject's +workaround");
  }

  // The expected outcome on this torch: the first entry that applies (corpus/expectations.json's rule).
  // One string, alternatives joined by " | " as flce prints them; split into adjacent literals when long.
  auto alts = [&](const Plan::Entry& e, size_t indent) {
    std::string joined;
    for (auto& a : e.alts) joined += (joined.empty() ? "" : std::string(kOutcomeSeparator)) + a;
    const std::string one = lit(joined);
    if (indent + 11 + one.size() <= 120) return one;
    return "(\n" + py::split_literal(joined, indent + 4) + "\n" + std::string(indent, ' ') + ")";
  };
  if (ranges)
    w.add("TV = tuple(int(n or 0) for n in (re.match(r\"[\\d.]*\", torch.__version__).group().split(\".\") + [\"\"] * 3)[:3])");
  const std::string one = p.entries.size() == 1 && !conds[0].empty()
                              ? "expected = " + alts(p.entries[0], 0) + " if " + conds[0] + " else None  # else any failure"
                              : "";
  if (p.entries.empty()) {
    w.add("expected = None  # no expectation: any failure reproduces");
  } else if (!one.empty() && one.size() <= 120) {
    w.add(one);
  } else {
    bool open = false, closed = false;
    for (size_t i = 0; i < p.entries.size() && !closed; ++i) {
      if (conds[i].empty() && !open) {
        w.add("expected = " + alts(p.entries[i], 0));
        closed = true;
        break;
      }
      w.add(conds[i].empty() ? "else:" : (open ? "elif " : "if ") + conds[i] + ":");
      w.add("    expected = " + alts(p.entries[i], 4));
      open = true;
      closed = conds[i].empty();
    }
    if (!closed) w.add(std::vector<std::string>{"else:  # no expectation here: any failure reproduces", "    expected = None"});
  }
  if (classify) {
    w.add(py::comment("Trace-time failures by flce's judge/signatures.json: regexes on \"module.Type: message\" of any "
                  "exception in the chain, and on its frames' \"file:line:function\"."));
    w.add("SIGNATURES = {");
    const Table table = signature_table(s.signatures_json);
    for (auto& id : p.signatures) {
      std::vector<std::string> pats, frames;
      for (auto& x : table.patterns.at(id).first) pats.push_back(lit(x));
      for (auto& x : table.patterns.at(id).second) frames.push_back(lit(x));
      const std::string entry = "    " + lit(id) + ": (" + list_of(pats) + ", " + list_of(frames) + "),";
      if (entry.size() <= 120) {
        w.add(entry);
      } else {
        w.add("    " + lit(id) + ": (");
        w.add("        [");
        for (auto& x : pats) w.add("            " + x + ",");
        w.add("        ],");
        w.add("        " + list_of(frames) + ",");
        w.add("    ),");
      }
    }
    w.add("}");
  }

  // The inputs, bit for bit what flce hands the subject.
  if (c.is_op()) {
    auto sh = [&](int64_t a, int64_t b) {
      return c.batched() ? std::vector<int64_t>{c.batch, a, b} : std::vector<int64_t>{a, b};
    };
    w.add(tensor_assignment("a", in.op_a, c.input_dtype, sh(c.V, c.BT), dev));
    w.add(tensor_assignment("b", in.x, c.input_dtype, sh(c.BT, c.H), dev));
    if (c.has_accumulator()) w.add(tensor_assignment("c", in.op_c, c.op_out_dtype(), sh(c.V, c.H), dev));
  } else {
    w.add(tensor_assignment("x", in.x, c.input_dtype, {in.BT, c.H}, dev));
    w.add(tensor_assignment("w", in.w, c.weight_dtype, {c.V, c.H}, dev));
    const bool ignored = std::any_of(in.target.begin(), in.target.end(), [&](int64_t t) { return t == c.ignore_index; });
    w.add(int_assignment("target", in.target, dev, ignored ? fmt::format("{}: ignored", c.ignore_index) : ""));
    if (c.bias) w.add(tensor_assignment("bias", in.bias, c.weight_dtype, {c.V}, dev));
    if (c.ce_weight) w.add(tensor_assignment("ce_weight", in.ce_weight, DType::F32, {c.V}, dev, "class weights"));
    if (c.reduction == Reduction::NONE && k.grads)
      w.add(tensor_assignment("grad_loss", in.token_grad, DType::F32, {in.BT}, dev, "upstream gradient"));
  }
  w.blank(2);
  w.add(forward_def(c, base, k));
  w.blank(2);

  if (classify) {
    w.add({"def classify(e):  # the first carried signature the exception chain matches (flce's rule), else its type",
           "    chain, todo = [], [e]",
           "    while todo:  # __cause__, __context__ and wrappers' attributes (InductorError.inner_exception)",
           "        x = todo.pop()",
           "        if x is not None and all(x is not y for y in chain):",
           "            chain.append(x)",
           "            todo += [x.__cause__, x.__context__, *(v for v in vars(x).values() if isinstance(v, BaseException))]",
           "    texts = [f\"{type(x).__module__}.{type(x).__qualname__}: {x}\" for x in chain]",
           "    frames = [f\"{f.filename}:{f.lineno}:{f.name}\" for x in chain for f in traceback.extract_tb(x.__traceback__)]",
           "    for sig, (patterns, frame_patterns) in SIGNATURES.items():",
           "        found = any(re.search(p, text) for p in patterns for text in texts)",
           "        if found and (not frame_patterns or any(re.search(p, f) for p in frame_patterns for f in frames)):",
           "            return sig",
           "    return f\"error:{type(e).__name__}\""});
    w.blank(2);
  }
  if (p.ladder) {
    std::vector<std::string> rungs;
    for (Backend b : kLadder) {
      if (b == c.compile.backend) break;
      rungs.push_back(fmt::format("\"{}\"", name(b)));
    }
    const std::string rung_list = rungs.size() == 1 ? "(" + rungs[0] + ",)" : "(" + [&] {
      std::string r;
      for (auto& x : rungs) r += (r.empty() ? "" : ", ") + x;
      return r;
    }() + ")";
    w.add("def stage(sig):  # flce's backend ladder: the first backend that shows the same failure");
    w.add("    for backend in " + rung_list + ":");
    w.add("        torch._dynamo.reset()");
    w.add("        fn = " + compile_call(c, "backend", false));  // the rungs below inductor take no mode
    w.add("        try:");
    w.add(call_lines(c, base, k, false, 12));
    w.add("        except Exception as e:");
    w.add("            if classify(e) == sig:");
    w.add("                return backend");
    w.add("    return " + lit(backend));
    w.blank(2);
  }

  // The fp64 reference and flce's bounds.
  const short_form::Reference ref = short_form::reference(c, in);
  w.add(ref.lines);
  w.add("REF = {  # per output: fp64 reference, its bound's formula (judge/MATH.md), flce's bound per element");
  for (auto& [n, bound] : bounds.elem) {  // name order, as flce's judge walks them (and got lists them)
    const std::string expr = std::find_if(ref.outputs.begin(), ref.outputs.end(), [&](auto& o) { return o.first == n; })->second;
    std::vector<std::string> nums;
    for (double b : bounds.elem.at(n).data) nums.push_back(py::float_lit(b));
    const std::string formula = short_form::bound_formula(c, n);
    std::string entry = "    " + lit(n) + ": (" + expr + ", " + lit(formula) + ", ";
    if (entry.size() + 1 > 120) entry = "    " + lit(n) + ": (\n        " + expr + ",\n" + py::split_literal(formula, 8) + ", ";
    w.add(py::wrapped(entry, nums, "),", 8));
  }
  w.add("}");
  if (c.return_predicted_tokens) {
    std::vector<std::string> sets;
    for (auto& a : bounds.acceptable_predictions) {
      std::vector<std::string> v;
      for (int64_t j : a) v.push_back(std::to_string(j));
      sets.push_back(list_of(v));
    }
    w.add("# predicted_tokens: per token, the classes whose logit can reach the max under the logit errors");
    w.add(py::wrapped("ACCEPT = ", sets, "", 4));
  }

  // The oracles in flce's order; the first finding is the outcome.
  if (p.compiled && c.compile.capture_scalar_outputs)
    w.add("torch._dynamo.config.capture_scalar_outputs = True  # the case's compile option");
  w.add("findings, eager = [], {}");
  std::string oracles = "(\"eager\", forward)";
  if (p.compiled) oracles += ", (\"compiled\", " + compile_call(c, lit(backend), c.compile.backend == Backend::INDUCTOR) + ")";
  else oracles += ",";
  w.add("for oracle, fn in (" + oracles + "):");
  w.add("    try:");
  w.add(call_lines(c, base, k, true, 8));
  if (classify) {
    w.add("    except Exception as e:  # a trace-time failure, named by the carried signatures");
    w.add("        sig = classify(e)");
    w.add("        print(f\"{oracle}: {sig}: {type(e).__name__}:\", str(e).partition(\"\\n\")[0][:300])");
    if (std::find(p.signatures.begin(), p.signatures.end(), kNoKernel) != p.signatures.end()) {
      w.add("        if oracle == \"eager\" and sig == \"op-not-implemented-on-device\":");
      w.add("            continue  # no kernel for the op here: eager shows nothing (flce: unsupported)");
    }
    w.add("        findings.append(f\"{sig}@eager:-\" if oracle == \"eager\" else f\"{sig}@compiled:" + backend + "\")");
  } else {
    w.add("    except Exception as e:  # no signature is expected: any error is the finding");
    w.add("        print(f\"{oracle}: {type(e).__name__}:\", str(e).partition(\"\\n\")[0][:300])");
    w.add("        findings.append(f\"error:{type(e).__name__}@{oracle}\")");
  }
  w.add("        continue");
  w.add(py::wrapped("    got = ", got_items(base, bounds), "", 8, "{", "}"));
  w.add("    for (name, (ref, formula, bound)), out in zip(REF.items(), got.values()):  # flce's judge, in name order");
  w.add("        what = (\"missing\" if out is None else \"shape\" if out.shape != ref.shape");
  w.add("                else \"dtype\" if getattr(eager.get(name), \"dtype\", out.dtype) != out.dtype else None)");
  std::string numeric = "if what is None:";
  if (c.return_predicted_tokens) {
    w.add("        if what is None and name == \"predicted_tokens\":");
    w.add("            pairs = enumerate(zip(out.tolist(), ref.tolist()))");
    w.add("            what = \"prediction\" if any(p != r and (r < 0 or p not in ACCEPT[i]) for i, (p, r) in pairs) else None");
    numeric = "elif what is None:";
  }
  w.add("        " + numeric);
  w.add("            out, ref = out.detach().cpu().double().flatten(), ref.detach().flatten()");
  w.add("            ratio = ((out - ref).abs() / torch.tensor(bound, dtype=torch.float64)).nan_to_num(0, 0, 0)");
  w.add("            k = int(ratio.argmax())");
  w.add("            print(f\"{oracle} {name}: err {abs(out[k] - ref[k]):.3g} bound {bound[k]:.3g} ratio {ratio[k]:.4g}\", formula)");
  if (special) {  // NaN/Inf are fed on purpose: only finite pairs are judged
    w.add("            what = \"out-of-bounds\" if ratio[k] > 1 else None");
  } else {
    w.add("            nonfinite = (~(out.isfinite() & ref.isfinite()) & ~(out.isnan() & ref.isnan()) & (out != ref)).any()");
    w.add("            what = \"nonfinite\" if nonfinite else \"out-of-bounds\" if ratio[k] > 1 else None");
  }
  w.add("        findings += [f\"judge:{name}:{what}@{oracle}\"] if what else []");
  w.add("    eager = got");
  w.add("outcome = findings[0] if findings else \"pass\"");
  if (p.ladder) {  // walked outside any except block: an error raised there would chain the compiled one
    w.add("sig = outcome.partition(\"@\")[0]");
    w.add("if outcome == f\"{sig}@compiled:" + backend + "\" and sig in SIGNATURES:");
    w.add("    outcome = f\"{sig}@compiled:{stage(sig)}\"  # flce's first failing stage");
  }
  w.add(p.entries.empty() || p.fallback ? "ok = outcome in expected.split(\" | \") if expected else outcome != \"pass\""
                                        : "ok = outcome in expected.split(\" | \")");
  if (p.ladder) {  // flce's rule (repro.hpp reproduces): a compile failure reproduces at any stage
    w.add("named = [e for e in (expected or \"\").split(\" | \") if \"@compiled:\" in outcome and e.startswith(f\"{sig}@compiled:\")]");
    w.add("if not ok and named:");
    w.add("    print(f\"note: {outcome} is the failure {named[0]} names, first shown at another rung of the backend ladder here\")");
    w.add("    ok = True");
  }
  w.add("print(f\"REPRODUCED: {outcome}\" if ok else f\"NOT REPRODUCED: got {outcome}, expected {expected or 'a failure'}\")");
  w.add("sys.exit(0 if ok else 1)");
  return w.text();
}

}  // namespace flce
