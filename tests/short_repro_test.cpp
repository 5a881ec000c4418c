// The short reproducer's C++ half: which form a case gets and why, the length of the softcap
// case's script, expectations as torch conditions, and strings that must stay data
// (tests/data/repro/short_verdicts.py runs the scripts against flce repro; tensor_literal_test.cpp
// checks the literals).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "case/inputs.hpp"
#include "repro/emit_python.hpp"
#include "repro/repro.hpp"
#include "repro/short_repro.hpp"
#include "repro/tensor_literal.hpp"

namespace flce {
namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string signatures() { return read(std::string(FLCE_SOURCE_DIR) + "/judge/signatures.json"); }

int lines_of(const std::string& text) {
  int n = 0;
  for (char ch : text) n += ch == '\n';
  return n;
}

bool is_short(const std::string& script) { return script.find("PAYLOAD = json.loads(") == std::string::npos; }

EmitSpec corpus_spec(const std::string& name, const std::string& subject) {
  const std::string path = std::string(FLCE_SOURCE_DIR) + "/corpus/cases/" + name + ".json";
  std::string from;
  return EmitSpec{from_json_file(path), subject, "", path, find_expectations(path, subject, &from), signatures()};
}

// Issue #22: the minimized softcap case, pasted into a Liger issue, is at most 60 lines.
TEST(ShortRepro, TheSoftcapCaseFitsSixtyLines) {
  const EmitSpec s = corpus_spec("liger-softcap-fp32-none-tiny", "liger");
  ASSERT_FALSE(s.expect.empty());
  const std::string script = emit_python(s);
  ASSERT_TRUE(is_short(script)) << script.substr(0, 400);
  EXPECT_LE(lines_of(script), 60) << script;
  for (const char* want : {"from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy",
                           "liger_fused_linear_cross_entropy(x, w, target, reduction=\"none\", softcap=3.0)",
                           "torch.tanh(", "REPRODUCED", "sys.exit(2)", "judge:grad_weight:out-of-bounds@eager",
                           "[MATH.md 5] sum_i E_ij |x_ik|", "torch.compile(forward, backend=\"inductor\")"})
    EXPECT_NE(script.find(want), std::string::npos) << want << "\n" << script;
  // The inputs are make_inputs' bits: w's words are there, in order.
  const Inputs in = make_inputs(s.c);
  std::vector<uint32_t> w;
  for (float v : in.w) w.push_back(f32_bits(v));
  EXPECT_NE(script.find(hex_words(w, DType::F32)), std::string::npos) << script;
}

TEST(ShortRepro, SmallCasesAreShortAndTheRestSaysWhyNot) {
  EmitSpec s = corpus_spec("seed-model-bf16-accum-fp32", "model");
  EXPECT_EQ(long_form_reason(s, false), "");
  EXPECT_TRUE(is_short(emit_python(s)));
  EXPECT_NE(long_form_reason(s, true).find("sequence"), std::string::npos);
  // Past 4,096 input elements: the long form, with its reason as the second line.
  Case big = s.c;
  big.BT = 256;  // 256 * 18 + 32 * 16 = 5,120 elements
  EmitSpec b = s;
  b.c = big;
  const std::string long_script = emit_python(b);
  EXPECT_FALSE(is_short(long_script));
  EXPECT_EQ(long_script.substr(0, long_script.find('\n', long_script.find('\n') + 1)),
            "#!/usr/bin/env python3\n# Long form: 5120 input elements: the short form carries at most 4096 as literals.");
  big.BT = (kShortReproMaxElements - 32 * 16) / 18;  // the largest BT under the limit
  b.c = big;
  EXPECT_TRUE(is_short(emit_python(b)));
  EmitSpec forced = s;
  forced.long_form = true;
  EXPECT_NE(emit_python(forced).find("# Long form: asked for (--long-form)."), std::string::npos);
  EmitSpec plugin = s;
  plugin.subject = "my_pkg.mod:flce";
  EXPECT_NE(long_form_reason(plugin, false).find("plug-in"), std::string::npos);
  EmitSpec bucket = s;
  bucket.expect = {{"", "any", "bucket-071b415849a5@compiled:eager"}};
  EXPECT_NE(long_form_reason(bucket, false).find("bucket-071b415849a5"), std::string::npos);
  EmitSpec extra = s;
  extra.c.extra_BT = {3};
  EXPECT_NE(long_form_reason(extra, false).find("extra_BT"), std::string::npos);
}

TEST(ShortRepro, ExpectationsBecomeTorchConditions) {
  const std::string script = emit_python(corpus_spec("seed-raw-addmm-dtype-out", "aten-dtype-out"));
  ASSERT_TRUE(is_short(script));
  for (const char* want : {"if TV >= (2, 13, 0):\n    expected = \"tier2-lowering@compiled:inductor\"\n",
                           "elif (2, 8, 0) <= TV < (2, 13, 0):\n    expected = \"tier1-decomposition@compiled:eager\"\n",
                           "else:  # no expectation here: any failure reproduces\n    expected = None\n",
                           "def stage(sig):", "def classify(e):", "\"op-not-implemented-on-device\": (",
                           "torch.addmm(out, a, b, out_dtype=torch.float32, out=out)"})
    EXPECT_NE(script.find(want), std::string::npos) << want << "\n" << script;
  // A campaign finding: one outcome on any torch, no version logic, no fallback.
  EmitSpec f = corpus_spec("seed-model-bf16-accum-fp32", "model");
  f.expect = {{"", "any", "judge:grad_weight:out-of-bounds@eager"}};
  const std::string finding = emit_python(f);
  EXPECT_NE(finding.find("\nexpected = \"judge:grad_weight:out-of-bounds@eager\"\n"), std::string::npos) << finding;
  EXPECT_EQ(finding.find("TV = "), std::string::npos);
  EXPECT_EQ(finding.find("torch.compile("), std::string::npos);  // an eager finding needs no compile
  EXPECT_NE(finding.find("ok = outcome in expected.split(\" | \")\n"), std::string::npos);
  // Alternatives of one bug: one string, as flce prints them.
  EmitSpec k1 = corpus_spec("model-inductor-cpu-dynamic-k1-chunk", "model");
  const std::string alts = emit_python(k1);
  EXPECT_NE(alts.find("\"inductor-cpu-index-out-of-bounds@compiled:inductor | judge:grad_weight:nonfinite@compiled"),
            std::string::npos) << alts;
}

// Strings from the spec are data: the subject path is one escaped literal, the source name a
// tamed comment word, an outcome that is not an outcome line sends the case to the long form.
TEST(ShortRepro, HostileStringsStayData) {
  EmitSpec s = corpus_spec("seed-model-bf16-accum-fp32", "model");
  s.subject_path = "/x\")\nimport os; os.system('touch /tmp/pwned')  # \\";
  s.source = "/tmp/a\nimport os.json";
  const std::string script = emit_python(s);
  ASSERT_TRUE(is_short(script));
  EXPECT_EQ(script.find("\nimport os"), std::string::npos) << script;
  EXPECT_NE(script.find("sys.path.insert(0, " + py_string_literal(s.subject_path) + ")"), std::string::npos);
  EXPECT_NE(script.find("of a_import_os.json,"), std::string::npos) << script.substr(0, 300);
  s.expect = {{"", "any", "pass\"]\nimport os #"}};
  EXPECT_FALSE(is_short(emit_python(s)));
}

}  // namespace
}  // namespace flce
