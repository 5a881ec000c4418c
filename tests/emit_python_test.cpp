// The pure-C++ half of `flce repro --emit-python`: the string-literal escaper, the
// payload splice and the input dump the script must match (tests/data/repro/*.py run
// the emitted scripts themselves).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "repro/emit_python.hpp"
#include "case/gen.hpp"
#include "case/inputs.hpp"
#include "repro/repro.hpp"
#include "repro/script_check.hpp"
#include "judge/expectations.hpp"

namespace flce {
namespace {

// Inside a literal, is every quote escaped (preceded by an odd run of backslashes)?
bool quotes_escaped(const std::string& lit) {
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    if (lit[i] != '"') continue;
    size_t n = 0;
    while (i - n - 1 > 0 && lit[i - n - 1] == '\\') ++n;
    if (n % 2 == 0) return false;
  }
  return true;
}

bool printable_ascii(const std::string& s) {
  for (unsigned char ch : s)
    if (ch < 0x20 || ch > 0x7e) return false;
  return true;
}

TEST(PyStringLiteral, EscapesWhatCouldEndOrBreakTheLiteral) {
  EXPECT_EQ(py_string_literal("abc"), "\"abc\"");
  EXPECT_EQ(py_string_literal("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(py_string_literal("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(py_string_literal("\\\""), "\"\\\\\\\"\"");
  EXPECT_EQ(py_string_literal("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(py_string_literal(std::string("\0\x7f", 2)), "\"\\x00\\x7f\"");
  EXPECT_EQ(py_string_literal("'''"), "\"'''\"");  // single quotes cannot end a "..." literal
}

TEST(PyStringLiteral, NonAsciiBecomesCodePointEscapes) {
  EXPECT_EQ(py_string_literal("\xc3\xa9"), "\"\\xe9\"");                // é
  EXPECT_EQ(py_string_literal("\xe2\x80\xa8"), "\"\\u2028\"");          // line separator
  EXPECT_EQ(py_string_literal("\xf0\x9f\x98\x80"), "\"\\U0001f600\"");  // emoji
  EXPECT_EQ(py_string_literal("\xff" "a"), "\"\\ufffda\"");             // invalid byte
  EXPECT_EQ(py_string_literal("\xe2\x80"), "\"\\ufffd\\ufffd\"");       // cut short
  EXPECT_EQ(py_string_literal("\xc0\xaf"), "\"\\ufffd\"");              // overlong '/'
}

TEST(PyStringLiteral, HostileTextStaysOneLiteral) {
  const std::string hostile = "\"\"\"'); import os; os.system(\"touch x\") #\n\\\"\\\\\"\x01\xe2\x80\xa8";
  std::string lit = py_string_literal(hostile);
  EXPECT_TRUE(printable_ascii(lit)) << lit;
  EXPECT_EQ(lit.front(), '"');
  EXPECT_EQ(lit.back(), '"');
  EXPECT_TRUE(quotes_escaped(lit)) << lit;
}

EmitSpec spec_with(const std::string& subject) {
  Case c = example_case();
  std::ifstream f(std::string(FLCE_SOURCE_DIR) + "/judge/signatures.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return EmitSpec{c, subject, "/tmp/x\"y", "case\n.json", {{">=2.13", "any", "tier2-lowering@compiled:inductor"}}, ss.str()};
}

TEST(EmitPython, PayloadIsSplicedOnceAsLiteralsOnly) {
  const std::string subject = "evil\"\"\"\nimport os\n#:x";
  std::string script = emit_python(spec_with(subject));
  EXPECT_EQ(script.find("@PAYLOAD@"), std::string::npos);
  const size_t start = script.find("PAYLOAD = json.loads(\n");
  ASSERT_NE(start, std::string::npos);
  EXPECT_EQ(script.find("PAYLOAD = json.loads(", start + 1), std::string::npos);
  // Every line up to the closing paren is one indented, escaped literal.
  std::istringstream lines(script.substr(start));
  std::string line;
  std::getline(lines, line);
  int literals = 0;
  while (std::getline(lines, line) && line != ")") {
    ASSERT_EQ(line.rfind("    \"", 0), 0u) << line;
    EXPECT_TRUE(printable_ascii(line)) << line;
    EXPECT_TRUE(quotes_escaped(line.substr(4))) << line;
    ++literals;
  }
  EXPECT_EQ(line, ")");
  EXPECT_GT(literals, 10);
  EXPECT_EQ(script.find("import os\n#:x"), std::string::npos);  // the subject never appears raw
  EXPECT_NE(script.find("tier2-lowering"), std::string::npos);  // signature ids and patterns are embedded
  EXPECT_NE(script.find("tuned_addmm"), std::string::npos);
}

TEST(EmitPython, RejectsABrokenSignatureTable) {
  EmitSpec s = spec_with("model");
  s.signatures_json = "{\"not\": \"an array\"}";
  EXPECT_THROW(emit_python(s), std::exception);
}

TEST(InputDump, OneSortedLinePerTensorWithElementBits) {
  Case c = example_case();
  c.bias = true;
  c.requires_grad.bias = true;
  c.extra_BT = {3};
  std::istringstream dump(input_dump(c));
  std::vector<std::string> names;
  std::string name, dtype, shape, hex;
  while (dump >> name >> dtype >> shape >> hex) {
    names.push_back(name);
    if (name == "x") {
      EXPECT_EQ(dtype, "bf16");
      EXPECT_EQ(shape, std::to_string(c.BT) + "," + std::to_string(c.H));
      ASSERT_EQ(hex.size(), static_cast<size_t>(c.BT * c.H * 8));
      // element 0, little endian: the generator's value (exact in bf16) as fp32 bits
      const uint32_t bits = f32_bits(gen_input(make_gen_spec(c), 0, 0));
      EXPECT_EQ(bits & 0xffffu, 0u);  // a bf16 value: the low half is zero
      char want[9];
      std::snprintf(want, sizeof want, "%02x%02x%02x%02x", bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >> 24);
      EXPECT_EQ(hex.substr(0, 8), want);
    }
    if (name == "target") {
      EXPECT_EQ(hex.size(), static_cast<size_t>(c.BT * 16));
    }
    if (name == "x@3") {
      EXPECT_EQ(shape, "3," + std::to_string(c.H));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"bias", "target", "target@3", "token_grad", "token_grad@3", "w", "x", "x@3"}));
  Case other = c;
  other.seed += 1;
  EXPECT_NE(input_dump(other), input_dump(c));
}

TEST(ScriptCheck, TheSameCompileFailureAtAnotherStageIsTheSameVerdict) {
  // On the H200, four campaign scripts of dynamo-symnode-no-value printed NOT REPRODUCED alone
  // while showing that very error: their ladder broke first at eager, the campaign had named inductor.
  ScriptCheck c;
  c.verdict = "REPRODUCED";
  c.exit = 0;
  c.line = "REPRODUCED: dynamo-symnode-no-value@compiled:eager";
  EXPECT_TRUE(same_verdict(c, "REPRODUCED: dynamo-symnode-no-value@compiled:inductor", 0));
  EXPECT_FALSE(same_verdict(c, "REPRODUCED: data-dependent-equal@compiled:eager", 0));
  c.line = "REPRODUCED: judge:loss:out-of-bounds@eager";
  EXPECT_FALSE(same_verdict(c, "REPRODUCED: judge:loss:out-of-bounds@compiled", 0));
  c.verdict = "NOT REPRODUCED";
  c.exit = 1;
  c.line = "NOT REPRODUCED: got pass, expected x@compiled:inductor";
  EXPECT_EQ(outcome_in(c.line), "pass");
  EXPECT_FALSE(same_verdict(c, "REPRODUCED: x@compiled:inductor", 0));
}

// A script killed at the check's limit gave no verdict: the campaign says "not checked", not
// "differs" (on the H200 a check cut at 34 s during a script's earlier calls read as a differing
// verdict, its last table row quoted as the script's answer).
TEST(ScriptCheck, AScriptKilledAtTheLimitHasNoVerdict) {
  const std::string dir = ::testing::TempDir() + "/flce-slow-script";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/repro.py";
  std::ofstream(path) << "import time\nprint('eager   ok   ran (not judged)', flush=True)\ntime.sleep(60)\n";
  const ScriptCheck c = check_script_alone(path, {"/usr/bin/python3", false, 1.0});
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.verdict, "");
  EXPECT_EQ(c.exit, -1);
  EXPECT_LT(c.seconds, 10);
  EXPECT_EQ(c.to_json().value("timed_out", false), true);
  std::filesystem::remove_all(dir);
}

TEST(Expectations, ReproducesAndRanges) {
  EXPECT_TRUE(reproduces("tier2-lowering@compiled:inductor", "tier2-lowering@compiled:inductor"));
  EXPECT_FALSE(reproduces("tier2-lowering@compiled:inductor", "tier1-decomposition@compiled:eager"));
  EXPECT_TRUE(reproduces("bucket-0123456789ab@eager:-", ""));
  EXPECT_FALSE(reproduces("pass", ""));
  EXPECT_FALSE(reproduces("unsupported", ""));
  // The same compile failure at another stage reproduces (a campaign's stage may come from its
  // signature's walk on another graph), and restaged() names the alternative it matched.
  const std::string alts = "judge:loss:out-of-bounds@compiled | dynamo-symnode-no-value@compiled:inductor";
  EXPECT_TRUE(reproduces("dynamo-symnode-no-value@compiled:eager", alts));
  EXPECT_EQ(restaged("dynamo-symnode-no-value@compiled:eager", alts), "dynamo-symnode-no-value@compiled:inductor");
  EXPECT_EQ(restaged("dynamo-symnode-no-value@compiled:inductor", alts), "");  // exact: no note
  EXPECT_FALSE(reproduces("data-dependent-equal@compiled:eager", alts));
  EXPECT_FALSE(reproduces("judge:loss:out-of-bounds@eager", alts));  // numeric: another oracle is another failure
  EXPECT_EQ(torch_minor_range("2.13.0+cu130"), ">=2.13,<2.14");
  EXPECT_EQ(torch_minor_range("2.9.1"), ">=2.9,<2.10");
  std::vector<ExpectedOutcome> v{{">=2.8,<2.13", "any", "tier1"}, {">=2.13", "cuda", "gpu-only"}, {">=2.13", "any", "tier2"}};
  EXPECT_EQ(expected_here(v, "2.11.0", false), "tier1");
  EXPECT_EQ(expected_here(v, "2.13.0", true), "gpu-only");
  EXPECT_EQ(expected_here(v, "2.13.0", false), "tier2");
  EXPECT_EQ(expected_here(v, "2.7.0", false), "");
}

TEST(Expectations, AnOutcomeArrayNamesAlternativesOfOneBug) {
  // One memory-safety bug, several symptoms: the repro matches any of them, and only them.
  const auto pins = parse_expectations(
      R"([{"case": "c.json", "subject": "model", "expect": [{"torch": ">=2.13", "device": "cpu",)"
      R"( "outcome": ["inductor-cpu-index-out-of-bounds@compiled:inductor", "judge:grad_weight:nonfinite@compiled"]}]}])");
  ASSERT_EQ(pins.size(), 1u);
  const std::string want = pins[0].expect.at(0).outcome;
  EXPECT_EQ(want, "inductor-cpu-index-out-of-bounds@compiled:inductor | judge:grad_weight:nonfinite@compiled");
  EXPECT_TRUE(reproduces("inductor-cpu-index-out-of-bounds@compiled:inductor", want));
  EXPECT_TRUE(reproduces("judge:grad_weight:nonfinite@compiled", want));
  EXPECT_FALSE(reproduces("judge:grad_weight:out-of-bounds@compiled", want));
  EXPECT_FALSE(reproduces("judge:grad_weight:nonfinite", want));  // a prefix is not a match
  EXPECT_FALSE(reproduces("pass", want));
  // An empty array, an empty or "pass" alternative, or one holding the separator is refused by name.
  for (const char* bad : {R"([])", R"([""])", R"(["pass", "x@eager:-"])", R"(["a@eager:- | b@eager:-"])", R"([1])"}) {
    const std::string doc = std::string(R"([{"case": "c.json", "expect": [{"outcome": )") + bad + "}]}]";
    try {
      parse_expectations(doc, "E");
      ADD_FAILURE() << "accepted " << doc;
    } catch (const CaseError& e) {
      EXPECT_NE(std::string(e.what()).find("E: entry 0: expect[0].outcome"), std::string::npos) << e.what();
    }
  }
}

TEST(Expectations, LineKeepsTheCorpusSpacing) {
  PinEntry e{"min-seed", "model", "why \"quoted\"", {">=2.13,<2.14", "cpu", "tier2-lowering@compiled:inductor"}};
  EXPECT_EQ(expectation_line(e),
            "{\"case\": \"cases/min-seed.json\", \"subject\": \"model\", \"note\": \"why \\\"quoted\\\"\", \"expect\": "
            "[{\"torch\": \">=2.13,<2.14\", \"device\": \"cpu\", \"outcome\": \"tier2-lowering@compiled:inductor\"}]}");
}

TEST(Pin, WritesTheCaseAndAppendsOneEntryLine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("flce-pin-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "cases");
  const std::string head = "[\n  {\"case\": \"cases/a.json\", \"subject\": \"model\", \"expect\": []},\n"
                           "  {\"case\": \"cases/b.json\", \"subject\": \"model\", \"expect\": []}\n]\n";
  std::ofstream(dir / "expectations.json") << head;
  Case c = example_case();
  c.V = 7;
  PinEntry e{"found-1", "model", "", {">=2.13,<2.14", "cpu", "tier2-lowering@compiled:inductor"}};
  EXPECT_EQ(pin_case(dir.string(), c, e), (dir / "cases" / "found-1.json").string());
  EXPECT_EQ(from_json_file((dir / "cases" / "found-1.json").string()), c);
  std::ifstream in(dir / "expectations.json");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), head.substr(0, head.size() - 3) + ",\n  " + expectation_line(e) + "\n]\n");
  EXPECT_THROW(pin_case(dir.string(), c, e), CaseError);  // the entry exists already
  e.name = "../escape";
  EXPECT_THROW(pin_case(dir.string(), c, e), CaseError);  // names cannot leave cases/
  EXPECT_FALSE(fs::exists(dir / "escape.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flce
