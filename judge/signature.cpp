#include "judge/signature.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace flce {

namespace {

std::vector<int> parse_version(const std::string& v) {
  std::vector<int> out;
  size_t i = 0;
  while (i < v.size() && out.size() < 3) {
    if (!isdigit(static_cast<unsigned char>(v[i]))) break;
    int n = 0;
    // Saturating: a run of digits past int ("2.99999999999") is a huge version, not UB
    // (found by fuzz/targets/expectations_fuzzer.cpp; fuzz/targets/regressions/expectations_fuzzer/).
    while (i < v.size() && isdigit(static_cast<unsigned char>(v[i]))) {
      const int d = v[i++] - '0';
      n = n > (std::numeric_limits<int>::max() - d) / 10 ? std::numeric_limits<int>::max() : n * 10 + d;
    }
    out.push_back(n);
    if (i < v.size() && v[i] == '.') ++i;
    else break;
  }
  while (out.size() < 3) out.push_back(0);
  return out;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> v;
  if (j.contains(key))
    for (auto& s : j.at(key)) v.push_back(s.get<std::string>());
  return v;
}

}  // namespace

std::vector<std::string> outcome_alternatives(const std::string& expected) {
  std::vector<std::string> alts;
  for (size_t at = 0;;) {
    const size_t end = expected.find(kOutcomeSeparator, at);
    alts.push_back(expected.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return alts;
    at = end + kOutcomeSeparator.size();
  }
}

bool outcome_matches(const std::string& expected, const std::string& got) {
  const std::vector<std::string> alts = outcome_alternatives(expected);
  return std::find(alts.begin(), alts.end(), got) != alts.end();
}

bool version_in_range(const std::string& version, const std::string& range) {
  auto v = parse_version(version);
  std::stringstream ss(range);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part.erase(0, part.find_first_not_of(' '));
    if (part.empty()) continue;
    std::string op;
    while (!part.empty() && (part[0] == '<' || part[0] == '>' || part[0] == '=' || part[0] == '!')) {
      op += part[0];
      part.erase(0, 1);
    }
    auto r = parse_version(part);
    bool ok = op == ">=" ? v >= r : op == ">" ? v > r : op == "<=" ? v <= r : op == "<" ? v < r
            : op == "!=" ? v != r : v == r;
    if (!ok) return false;
  }
  return true;
}

std::string normalize_message(const std::string& msg) {
  std::string s = msg.substr(0, msg.find('\n'));  // first line carries the identity
  static const std::regex addr("0x[0-9a-fA-F]+"), path("(/[^\\s:'\"]+)+"), shape("\\[[0-9, ]*\\]|\\([0-9, ]+\\)"),
      num("[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?"), quoted_fake("FakeTensor\\([^)]*\\)"), ws("\\s+");
  s = std::regex_replace(s, addr, "<addr>");
  s = std::regex_replace(s, path, "<path>");
  s = std::regex_replace(s, quoted_fake, "FakeTensor(...)");
  s = std::regex_replace(s, shape, "<shape>");
  s = std::regex_replace(s, num, "<n>");
  s = std::regex_replace(s, ws, " ");
  return s;
}

bool cuda_context_lost(const std::string& text) {
  // The sticky errors by name, then any other "CUDA error:" text: torch raises those as
  // AcceleratorError, and one unnamed here (on the H200, "operation not supported on
  // global/shared address space" after a compiled Liger case) left a worker failing 1,635 cases
  // in 30 s. Restarting a worker whose context was fine costs seconds; keeping a dead one, the night.
  for (const char* p : {"illegal memory access", "device-side assert", "unspecified launch failure",
                        "misaligned address", "illegal instruction was encountered", "CUDA error: uncorrectable ECC",
                        "operation not supported on global/shared address space", "CUDA error:"})
    if (text.find(p) != std::string::npos) return true;
  return false;
}

std::string innermost_torch_frame(const ErrorChain& chain) {
  for (auto link = chain.rbegin(); link != chain.rend(); ++link)
    for (auto f = link->frames.rbegin(); f != link->frames.rend(); ++f) {
      auto pos = f->rfind("/torch/");
      if (pos == std::string::npos) continue;
      // drop the line number: "torch/_decomp/decompositions.py:1234:addmm" -> "...py:addmm"
      std::string rel = f->substr(pos + 1);
      auto c1 = rel.find(':');
      auto c2 = rel.rfind(':');
      return c1 == std::string::npos || c1 == c2 ? rel : rel.substr(0, c1) + ":" + rel.substr(c2 + 1);
    }
  return "";
}

SignatureTable SignatureTable::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("signature table: cannot read " + path);
  nlohmann::json j;
  try {
    f >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error("signature table " + path + ": invalid JSON: " + e.what());
  }
  if (!j.is_array()) throw std::runtime_error("signature table " + path + ": must be a JSON array");
  SignatureTable t;
  for (size_t i = 0; i < j.size(); ++i) {
    auto& e = j[i];
    try {
      KnownSignature k;
      k.id = e.at("id").get<std::string>();
      k.title = e.value("title", k.id);
      k.stage_hint = e.value("stage_hint", "");
      k.generic = e.value("generic", false);
      k.patterns = strings(e, "patterns");
      k.frame_patterns = strings(e, "frame_patterns");
      k.upstream = strings(e, "upstream");
      k.expected_torch = e.value("expected_torch", "");
      if (k.patterns.empty()) throw std::runtime_error("patterns: must list at least one regex");
      for (auto& p : k.patterns) std::regex check(p);
      t.entries_.push_back(std::move(k));
    } catch (const std::exception& ex) {
      throw std::runtime_error(fmt::format("signature table {}: entry {}: {}", path, i, ex.what()));
    }
  }
  return t;
}

SignatureTable SignatureTable::load_default() { return load(std::string(FLCE_SOURCE_DIR) + "/judge/signatures.json"); }

Signature SignatureTable::classify(const ErrorChain& chain, const std::string& torch_version) const {
  Signature sig;
  sig.innermost_torch_frame = innermost_torch_frame(chain);
  // Known signatures: search every link of the chain, innermost first (the root cause).
  for (auto& k : entries_) {
    for (auto link = chain.rbegin(); link != chain.rend(); ++link) {
      std::string text = link->type + ": " + link->message;
      bool hit = false;
      for (auto& p : k.patterns)
        if (std::regex_search(text, std::regex(p))) hit = true;
      if (!hit) continue;
      if (!k.frame_patterns.empty()) {
        bool frame_hit = false;
        for (auto& l : chain)
          for (auto& fr : l.frames)
            for (auto& p : k.frame_patterns)
              if (std::regex_search(fr, std::regex(p))) frame_hit = true;
        if (!frame_hit) continue;
      }
      sig.id = k.id;
      sig.known = true;
      sig.generic = k.generic;
      sig.title = k.title;
      sig.matched = text.substr(0, text.find('\n'));
      sig.upstream = k.upstream;
      if (!k.expected_torch.empty()) sig.expected_here = version_in_range(torch_version, k.expected_torch);
      return sig;
    }
  }
  if (chain.empty()) {
    sig.id = "bucket-empty";
    sig.title = "error without exception chain";
    return sig;
  }
  const ErrorLink& root = chain.back();
  std::string norm = normalize_message(root.message);
  sig.title = root.type + ": " + norm;
  sig.matched = root.type + ": " + root.message.substr(0, root.message.find('\n'));
  // The innermost torch frame is reported, not hashed: the harness around the subject (flce's
  // worker, a standalone repro.py) can change which torch frame is innermost for one bug, and
  // a repro script must find the bucket its campaign found (measured: a GPU campaign's
  // "marked as skipped" finding got another id from its own repro.py).
  sig.id = fmt::format("bucket-{:012x}", fnv1a(root.type + "|" + norm) & 0xffffffffffffull);
  return sig;
}

bool is_unsupported_outcome(const std::string& outcome) {
  return outcome == "unsupported" || outcome.rfind(kUnsupportedBySubject, 0) == 0;
}

std::vector<std::string> unsupported_params(const std::string& outcome) {
  std::vector<std::string> v;
  if (outcome.rfind(kUnsupportedBySubject, 0) != 0) return v;
  const std::string rest = outcome.substr(kUnsupportedBySubject.size());
  for (size_t at = 0; at <= rest.size();) {
    size_t plus = rest.find('+', at);
    if (plus == std::string::npos) plus = rest.size();
    if (plus > at) v.push_back(rest.substr(at, plus - at));
    at = plus + 1;
  }
  return v;
}

bool is_compile_failure(const std::string& outcome) {
  return outcome.find("@compiled:") != std::string::npos && outcome.rfind("judge:", 0) != 0 &&
         outcome.rfind("crash:", 0) != 0 && outcome.rfind("timeout@", 0) != 0;
}

bool same_failure(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (!is_compile_failure(a) || !is_compile_failure(b)) return false;
  const size_t at = a.find("@compiled:");
  return a.compare(0, at, b, 0, b.find("@compiled:")) == 0;
}

std::string finding_id(const std::string& key) {
  std::string slug;
  for (char ch : key) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (keep) slug += c;
    else if (!slug.empty() && slug.back() != '-') slug += '-';
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return fmt::format("{}-{:08x}", slug.empty() ? "finding" : slug, fnv1a(key) & 0xffffffffu);
}

}  // namespace flce
