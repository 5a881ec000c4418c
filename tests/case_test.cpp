// The case model: canonical JSON round trip and validation that names the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "case/case.hpp"

using namespace flce;
using json = nlohmann::ordered_json;

TEST(Case, ExampleIsValidAndRoundTrips) {
  Case c = example_case();
  EXPECT_NO_THROW(validate(c));
  std::string text = to_json(c);
  Case back = from_json(text);
  EXPECT_EQ(back, c);
  EXPECT_EQ(to_json(back), text) << "canonical form must be a fixed point";
}

TEST(Case, CanonicalFormHasSchemaVersionFirstAndEveryField) {
  json j = json::parse(to_json(example_case()));
  EXPECT_EQ(j.begin().key(), "schema_version");
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  for (const char* k : {"kind", "BT", "H", "V", "accum_dtype", "softcap", "compile", "requires_grad", "seed", "regime"})
    EXPECT_TRUE(j.contains(k)) << k;
}

TEST(Case, MissingFieldsTakeDocumentedDefaults) {
  Case c = from_json(R"({"BT": 4})");
  Case d;
  d.BT = 4;
  EXPECT_EQ(c, d);
}

TEST(Case, RoundTripsEveryNonDefaultValue) {
  Case c;
  c.kind = Kind::FLCE;
  c.BT = 3; c.H = 5; c.V = 7;
  c.input_dtype = DType::F16; c.weight_dtype = DType::F32; c.accum_dtype = DType::F32;
  c.bias = true; c.ce_weight = true; c.ignore_index = -1; c.ignore_fraction = 0.25;
  c.label_smoothing = 0.1; c.lse_square_scale = 1e-4; c.softcap = 30.0;
  c.reduction = Reduction::NONE; c.grad_output = 0.5; c.token_grad = TokenGrad::ONES;
  c.return_z_loss = c.return_token_accuracy = c.return_predicted_tokens = c.use_token_scaling = true;
  c.requires_grad = {false, true, true};
  c.autocast = Autocast::BF16; c.device = Device::CUDA;
  c.compile = {Backend::AOT_EAGER, true, false, false, CompileMode::DEFAULT};
  c.extra_BT = {2, 9};
  c.regime = Regime::SPECIAL_VALUES; c.semantics = Semantics::TORCH;
  c.seed = 18446744073709551615ull;  // full uint64 survives
  Case back = from_json(to_json(c));
  EXPECT_EQ(back, c);
  c.compile.dynamic.reset();
  EXPECT_EQ(from_json(to_json(c)), c) << "dynamic null is distinct from false";
}

TEST(Case, RequiresGradBiasDefaultsToBias) {
  EXPECT_TRUE(from_json(R"({"bias": true})").requires_grad.bias);
  EXPECT_FALSE(from_json(R"({"bias": false})").requires_grad.bias);
  EXPECT_FALSE(from_json(R"({"bias": true, "requires_grad": {"bias": false}})").requires_grad.bias);
}

struct Invalid {
  const char* json;
  const char* field;    // the message must start with this field
  const char* mention;  // and mention this
};

class CaseInvalid : public ::testing::TestWithParam<Invalid> {};

TEST_P(CaseInvalid, RejectedWithFieldNamed) {
  auto p = GetParam();
  try {
    from_json(p.json);
    FAIL() << "accepted: " << p.json;
  } catch (const CaseError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.field, p.field) << msg;
    EXPECT_EQ(msg.rfind(std::string(p.field) + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(p.mention), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, CaseInvalid,
    ::testing::Values(
        Invalid{R"({"label_smoothing": 1.5})", "label_smoothing", "must be in [0, 1], got 1.5"},
        Invalid{R"({"V": 0})", "V", "must be >= 1, got 0"},
        Invalid{R"({"BT": -3})", "BT", "must be >= 1"},
        Invalid{R"({"H": 0})", "H", "must be >= 1"},
        Invalid{R"({"V": 32, "ignore_index": 5})", "ignore_index", "outside [0, V)"},
        Invalid{R"({"ignore_fraction": -0.1})", "ignore_fraction", "must be in [0, 1]"},
        Invalid{R"({"lse_square_scale": -1})", "lse_square_scale", ">= 0"},
        Invalid{R"({"softcap": 0})", "softcap", "> 0"},
        Invalid{R"({"softcap": "big"})", "softcap", "must be null or a number"},
        Invalid{R"({"reduction": "avg"})", "reduction", "one of mean, sum, none"},
        Invalid{R"({"input_dtype": "fp8"})", "input_dtype", "one of fp32, fp16, bf16"},
        Invalid{R"({"accum_dtype": "bf16"})", "accum_dtype", "one of none, fp32"},
        Invalid{R"({"requires_grad": {"bias": true}})", "requires_grad.bias", "bias is false"},
        Invalid{R"({"compile": {"backend": "tvm"}})", "compile.backend", "inductor"},
        Invalid{R"({"compile": {"mode": "reduce-overhead", "backend": "aot_eager"}})", "compile.mode", "needs backend inductor"},
        Invalid{R"({"compile": {"dynamic": "maybe"}})", "compile.dynamic", "null, true or false"},
        Invalid{R"({"colour": "red"})", "colour", "unknown field"},
        Invalid{R"({"compile": {"fulgraph": true}})", "compile.fulgraph", "unknown field"},
        Invalid{R"({"schema_version": 2})", "schema_version", "must be 1"},
        Invalid{R"({"seed": -1})", "seed", "non-negative integer"},
        Invalid{R"({"BT": 2.5})", "BT", "must be an integer"},
        Invalid{R"({"bias": "yes"})", "bias", "true or false"},
        Invalid{R"({"grad_output": 1e400})", "case", "number overflow"},
        Invalid{R"({"BT": 8,})", "case", "not valid JSON"},
        Invalid{R"({"kind": "addmm", "label_smoothing": 0.1})", "label_smoothing", "only meaningful for kind flce"},
        Invalid{R"({"kind": "mm", "batch": 2})", "batch", "must be 1 unless kind is bmm"},
        Invalid{R"({"extra_BT": [4, 0]})", "extra_BT", "entries must be in [1, 2^31]"},
        Invalid{R"({"regime": "chaotic"})", "regime", "normal, large_logits"},
        Invalid{R"({"BT": 4194304, "V": 4194304})", "V", "largest tensor"},
        Invalid{R"([1, 2])", "case", "must be a JSON object"}),
    [](const ::testing::TestParamInfo<Invalid>& info) {
      std::string n = std::to_string(info.index) + "_" + info.param.field;
      for (auto& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

TEST(Case, ValidationErrorsListsEveryBrokenRule) {
  Case c;
  c.V = 0;
  c.label_smoothing = 2;
  c.softcap = -1.0;
  auto errs = validation_errors(c);
  std::vector<std::string> fields;
  for (auto& e : errs) fields.push_back(e.field);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "V"), fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "label_smoothing"), fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "softcap"), fields.end());
}
