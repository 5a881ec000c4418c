// The short reproducer's fp64 reference and bound labels (short_repro.hpp): flce's golden
// (oracles/golden.cpp, judge/MATH.md "Forward") written in plain torch autograd with only the
// terms a case uses, and the formula of each output's bound (judge/bounds.cpp, MATH.md).
#include <fmt/format.h>

#include <cctype>
#include <map>

#include "repro/short_repro.hpp"
#include "repro/py_source.hpp"
#include "judge/bounds.hpp"

namespace flce::short_form {

namespace {

struct Item {
  std::string name, text;
  bool keep;  // a variable even when used once (a leaf, or read after backward)
};

bool word_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

// Positions of `name` as a whole word in text (outside string literals).
std::vector<size_t> uses(const std::string& text, const std::string& name) {
  std::vector<size_t> at;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (quote) {
      if (text[i] == quote) quote = 0;
      continue;
    }
    if (text[i] == '"' || text[i] == '\'') {
      quote = text[i];
      continue;
    }
    if (text.compare(i, name.size(), name) == 0 && (i == 0 || (!word_char(text[i - 1]) && text[i - 1] != '.')) &&
        (i + name.size() == text.size() || !word_char(text[i + name.size()])))
      at.push_back(i);
  }
  return at;
}

// No operator outside brackets: safe to substitute without parentheses.
bool atomic(const std::string& e) {
  int depth = 0;
  for (char ch : e) {
    if (ch == '(' || ch == '[') ++depth;
    else if (ch == ')' || ch == ']') --depth;
    else if (depth == 0 && std::string(" +-*/@<>=&|").find(ch) != std::string::npos) return false;
  }
  return true;
}

// Assignments for the items used more than once (or kept); single uses are written in place.
std::vector<std::string> inline_once(std::vector<Item> items, std::vector<std::string>& sinks) {
  for (size_t i = 0; i < items.size(); ++i) {
    size_t n = 0;
    for (size_t j = i + 1; j < items.size(); ++j) n += uses(items[j].text, items[i].name).size();
    for (auto& s : sinks) n += uses(s, items[i].name).size();
    if (items[i].keep || n != 1) continue;
    const std::string with = atomic(items[i].text) ? items[i].text : "(" + items[i].text + ")";
    auto put = [&](std::string t) {
      if (t == items[i].name) return items[i].text;  // the whole expression: no parentheses
      const auto at = uses(t, items[i].name);
      for (auto it = at.rbegin(); it != at.rend(); ++it) t.replace(*it, items[i].name.size(), with);
      return t;
    };
    // The one user, and whether it still reads on one line with the expression in it.
    std::string* user = nullptr;
    size_t width = 0;
    for (size_t j = i + 1; j < items.size() && !user; ++j)
      if (!uses(items[j].text, items[i].name).empty()) user = &items[j].text, width = items[j].name.size() + 3;
    for (auto& sk : sinks)
      if (!user && !uses(sk, items[i].name).empty()) user = &sk, width = 12;
    if (!user || width + put(*user).size() > 100) continue;
    *user = put(*user);
    items[i].name.clear();
  }
  std::vector<std::string> out;
  for (auto& it : items)
    if (!it.name.empty()) out.push_back(it.name + " = " + it.text);
  return out;
}

std::string u(DType d) { return "u_" + std::string(dtype_name(d)); }

}  // namespace

Reference reference(const Case& c, const Inputs& in) {
  Reference r;
  const std::string cpu = c.device == Device::CUDA ? ".cpu()" : "";
  if (c.is_op()) {
    std::string e = "a" + cpu + ".double() @ b" + cpu + ".double()";
    if (c.has_accumulator()) e = "c" + cpu + ".double() + " + e;
    r.lines.push_back("# fp64 reference, as flce's golden: " + std::string(c.has_accumulator() ? "C + A @ B." : "A @ B."));
    r.outputs.push_back({"out", e});
    return r;
  }
  const RequiresGrad& rg = c.requires_grad;
  const bool mean = c.reduction == Reduction::MEAN, none = c.reduction == Reduction::NONE;
  bool ignored = false;
  int64_t kept = 0;
  for (int64_t t : in.target) {
    const bool ig = t == c.ignore_index || t < 0 || t >= c.V;
    ignored = ignored || ig;
    kept += !ig;
  }
  const bool grads = rg.input || rg.weight || (c.bias && rg.bias);
  std::vector<Item> items;
  auto leaf = [&](const std::string& big, const std::string& small, bool wants) {
    items.push_back({big, small + cpu + ".double()" + (wants ? ".requires_grad_()" : ""), wants});
  };
  leaf("X", "x", rg.input);
  leaf("W", "w", rg.weight);
  if (c.bias) leaf("B", "bias", rg.bias);
  if (c.ce_weight) items.push_back({"cw", "ce_weight" + cpu + ".double()", false});
  if (ignored) {
    items.push_back({"keep", "target" + cpu + " != " + std::to_string(c.ignore_index), true});
    items.push_back({"t", "target" + cpu + "[keep]", false});
  } else {
    items.push_back({"t", "target" + cpu, false});
  }
  std::string z = std::string(ignored ? "X[keep]" : "X") + " @ W.T" + (c.bias ? " + B" : "");
  if (c.softcap) {
    const std::string s = py::float_lit(*c.softcap);
    items.push_back({"z", z, false});
    z = s + " * torch.tanh(z / " + s + ")";
  }
  items.push_back({"logits", z, false});
  items.push_back({"lse", "torch.logsumexp(logits, 1)", false});
  items.push_back({"ct", "logits.gather(1, t[:, None])[:, 0]", false});
  std::string l = c.ce_weight ? "cw[t] * (lse - ct)" : "lse - ct";
  if (c.label_smoothing > 0) {
    const std::string ls = py::float_lit(c.label_smoothing);
    l = "(1 - " + ls + ") * (" + l + ") + " + ls + " / " + std::to_string(c.V) + " * (" +
        (c.ce_weight ? "cw * (lse[:, None] - logits)" : "lse[:, None] - logits") + ").sum(1)";
  }
  items.push_back({"tok", l, false});  // the token's loss
  const bool zl = c.lse_square_scale != 0;
  if (zl) items.push_back({"zl", py::float_lit(c.lse_square_scale) + " * lse**2", false});
  if (c.use_token_scaling) items.push_back({"sc", "torch.exp(ct - lse).detach()", false});
  const bool need_n = (mean && (zl || !c.ce_weight)) || (c.return_token_accuracy && !none) || (c.return_z_loss && mean);
  if (need_n) items.push_back({"N", "len(t)", false});
  std::string per = mean ? "tok / " + std::string(c.ce_weight ? "cw[t].sum()" : "N") : "tok";
  if (zl) per += mean ? " + zl / N" : " + zl";
  items.push_back({"L", c.use_token_scaling ? "sc * (" + per + ")" : per, false});
  const std::string zeros = fmt::format("torch.zeros({}, dtype=torch.float64)", in.BT);
  auto per_token = [&](const std::string& v) { return ignored ? zeros + ".index_put((keep,), " + v + ")" : v; };
  std::string loss = none ? per_token("L") : "L.sum()";
  if (mean && kept == 0 && nan_if_all_ignored(c)) loss += " + float(\"nan\")";  // 0/0, as F.cross_entropy
  items.push_back({"ref_loss", loss, true});
  std::vector<std::string> sinks;
  if (grads) {
    const std::string up = none ? "grad_loss" + cpu + ".double()"
                           : c.grad_output == 1.0 ? "" : "torch.tensor(" + py::float_lit(c.grad_output) + ", dtype=torch.float64)";
    sinks.push_back("ref_loss.backward(" + up + ")");
  }
  std::vector<std::pair<std::string, std::string>> outs;
  if (c.return_z_loss) {
    const std::string v = c.use_token_scaling ? "sc * zl" : "zl";
    const std::string e = zl ? (none ? per_token(v) : "(" + v + ").sum()" + std::string(mean ? " / N" : ""))
                             : (none ? zeros : "torch.tensor(0.0, dtype=torch.float64)");
    outs.push_back({"z_loss", e});
  }
  if (c.return_token_accuracy) {
    const std::string hit = "(logits.argmax(1) == t).double()";
    outs.push_back({"token_accuracy", none ? per_token(hit) : hit + ".sum() / N"});
  }
  if (c.return_predicted_tokens)
    outs.push_back({"predicted_tokens", ignored ? fmt::format("torch.full(({},), -1.0, dtype=torch.float64)", in.BT) +
                                                      ".index_put((keep,), logits.argmax(1).double())"
                                                : "logits.argmax(1).double()"});
  if (rg.input) outs.push_back({"grad_input", "X.grad"});
  if (rg.weight) outs.push_back({"grad_weight", "W.grad"});
  if (c.bias && rg.bias) outs.push_back({"grad_bias", "B.grad"});
  outs.push_back({"loss", "ref_loss"});
  for (auto& [n, e] : outs) sinks.push_back(e);
  std::vector<std::string> lines = inline_once(items, sinks);
  std::string terms = "cross entropy";
  if (c.softcap) terms = "softcap, " + terms;
  if (c.ce_weight) terms += ", class weights";
  if (c.label_smoothing > 0) terms += ", label smoothing";
  if (zl) terms += ", z-loss";
  if (c.use_token_scaling) terms += ", token scaling";
  if (ignored) terms += ", ignore_index";
  terms += fmt::format(", reduction {}", name(c.reduction));
  const std::string note = "  # fp64 reference in plain torch autograd, as flce's golden (MATH.md)";
  if (!lines.empty() && lines[0].size() + note.size() <= 120) lines[0] += note;
  else lines.insert(lines.begin(), "# fp64 reference in plain torch autograd, as flce's golden (MATH.md): " + terms);
  if (grads) lines.push_back(sinks[0]);
  r.lines = lines;
  for (size_t k = 0; k < outs.size(); ++k) r.outputs.push_back({outs[k].first, sinks[k + (grads ? 1 : 0)]});
  return r;
}

std::string bound_formula(const Case& c, const std::string& o) {
  const std::string uc = u(logits_dtype(c)), ua = u(DType::F32);
  if (c.is_op()) {
    const std::string uo = u(c.op_out_dtype());
    return fmt::format("[MATH.md op-level] gamma(K+1={}, {}) (sum_k |A B| + |C|) + 2 {} |out|{}", c.BT + 1, ua, uo,
                       c.op_out_dtype() == DType::F32 ? "" : " + " + uo + " sum_k |A B|");
  }
  const bool autocast = c.autocast != Autocast::NONE;
  const DType acc = c.accum_dtype.value_or(c.weight_dtype);
  const std::string uacc = dtype_eps(acc) >= dtype_eps(DType::F32) ? u(acc) : ua;
  if (o == "grad_input")
    return fmt::format("[MATH.md 5] sum_j E_ij |W_jk| + (gamma(V={}, {}) + {}{}) M", c.V, ua, u(c.input_dtype),
                       autocast && c.weight_dtype != logits_dtype(c) ? " + " + uc : "");
  if (o == "grad_weight" || o == "grad_bias")
    return fmt::format("[MATH.md 5] sum_i E_ij{} + ({} + gamma(BT={}, {}) + {}{}) M", o == "grad_bias" ? "" : " |x_ik|", uc,
                       c.BT, uacc, u(c.weight_dtype), autocast && o == "grad_weight" && c.input_dtype != logits_dtype(c) ? " + " + uc : "");
  if (o == "loss") {  // the token bound (MATH.md 3) in short: its terms as the case uses them
    std::string tok = c.ce_weight ? "w_t(d_lse+dz_t)" : "d_lse+dz_t";
    if (c.label_smoothing > 0) tok = "(1-ls)" + std::string(c.ce_weight ? tok : "(" + tok + ")") + "+eps sum_j w_j(d_lse+dz_j)";
    if (c.lse_square_scale != 0) tok += "+2lsq|lse|(d_lse+" + uc + "|lse|)";
    if (c.use_token_scaling) tok += "+|L_i|ds_i";
    const std::string ul = u(loss_dtype(c));
    if (c.reduction == Reduction::NONE) return "[MATH.md 3] " + tok + " + " + ul + " |L_i|";
    return fmt::format("[MATH.md 3, 6] sum_i [{}] + (gamma(BT={}, {}) + {}) sum_i |L_i|", tok, c.BT, ua, ul);
  }
  if (o == "z_loss") return "[MATH.md 3] 2 lsq |lse| (d_lse + " + uc + " |lse|) + " + u(c.input_dtype) + " |zl|";
  if (o == "token_accuracy") return "[MATH.md 7] the share of tokens whose argmax the logit errors make ambiguous";
  if (o == "predicted_tokens") return "[MATH.md 7] the fp64 argmax, or a class whose logit can reach the max";
  return "[MATH.md]";
}

}  // namespace flce::short_form
