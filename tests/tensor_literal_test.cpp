// Exact tensor literals for the short reproducer (repro/tensor_literal.hpp): every
// bit comes back from the text -- zeros of both signs, subnormals, infinities, NaN payloads --
// in bf16, fp16 and fp32, and a low-precision NaN goes through torch's own conversion.
// (tests/data/repro/check_inputs.py checks the tensors torch builds from them.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "repro/py_source.hpp"
#include "repro/tensor_literal.hpp"

namespace flce {
namespace {

// Storage words worth a round trip in each dtype: zeros of both signs, the smallest and
// largest subnormals and normals, infinities, quiet and signalling NaNs with payloads.
const std::vector<uint32_t> kBf16 = {0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x8001, 0x3f80, 0xbf80, 0x7f7f,
                                     0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffff};
const std::vector<uint32_t> kF16 = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x8001, 0x3c00, 0xbc00, 0x7bff,
                                    0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xffff};
const std::vector<uint32_t> kF32 = {0x00000000, 0x80000000, 0x00000001, 0x007fffff, 0x00800000, 0x80000001,
                                    0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
                                    0x7fc00000, 0xffc00000, 0x7f800001, 0xffffffff};

bool nan_word(uint32_t w, DType d) { return std::isnan(storage_value(w, d)); }

TEST(TensorLiteral, EveryWordComesBackFromTheText) {
  for (auto [d, words] : {std::pair{DType::BF16, kBf16}, {DType::F16, kF16}, {DType::F32, kF32}}) {
    for (uint32_t w : words) {
      const float v = storage_value(w, d);
      if (!nan_word(w, d)) {
        EXPECT_EQ(storage_bits(v, d), w) << dtype_name(d) << " " << std::hex << w;
      }
    }
    EXPECT_EQ(parse_hex_words(hex_words(words, d)), words) << dtype_name(d);
    // Through a whole literal: non-NaN words are the tensor's own bits.
    std::vector<uint32_t> finite;
    std::vector<float> values;
    for (uint32_t w : words)
      if (!nan_word(w, d)) finite.push_back(w), values.push_back(storage_value(w, d));
    const TensorLiteral t = tensor_literal(values, d, {static_cast<int64_t>(values.size())}, "cpu");
    EXPECT_FALSE(t.converted);
    EXPECT_EQ(parse_hex_words(t.python()), finite) << t.python();
    const std::string width = d == DType::F32 ? "torch.uint32" : "torch.uint16";
    EXPECT_NE(t.python().find("dtype=" + width + ").view("), std::string::npos) << t.python();
  }
}

TEST(TensorLiteral, Fp32KeepsNaNPayloadsAndSigns) {
  std::vector<float> v;
  for (uint32_t w : kF32) v.push_back(bits_f32(w));
  const TensorLiteral t = tensor_literal(v, DType::F32, {4, 4}, "cuda");
  EXPECT_FALSE(t.converted);
  EXPECT_EQ(parse_hex_words(t.python()), kF32);
  EXPECT_NE(t.python().find(".view(torch.float32).reshape(4, 4).to(\"cuda\")"), std::string::npos) << t.python();
}

// A NaN in a bf16/fp16 tensor: torch's own conversion picks its bits (0xffff from the vectorized
// CPU loop, 0x7fc0 from the scalar tail), so the literal is the fp32 staging values and `.to()`.
TEST(TensorLiteral, LowPrecisionNaNGoesThroughTorchsConversion) {
  for (DType d : {DType::BF16, DType::F16}) {
    const std::vector<float> v = {1.5f, bits_f32(0x7fc00000), -0.0f, std::numeric_limits<float>::infinity()};
    const TensorLiteral t = tensor_literal(v, d, {2, 2}, "cpu");
    EXPECT_TRUE(t.converted);
    EXPECT_EQ(t.given, DType::F32);
    EXPECT_EQ(parse_hex_words(t.python()), (std::vector<uint32_t>{0x3fc00000, 0x7fc00000, 0x80000000, 0x7f800000}));
    const std::string to = d == DType::BF16 ? ".to(torch.bfloat16)" : ".to(torch.float16)";
    EXPECT_NE(t.python().find("view(torch.float32).reshape(2, 2)" + to), std::string::npos) << t.python();
  }
  const TensorLiteral cuda = tensor_literal({bits_f32(0x7fc00000)}, DType::BF16, {1}, "cuda");
  EXPECT_NE(cuda.python().find(".to(\"cuda\", torch.bfloat16)"), std::string::npos) << cuda.python();
}

TEST(TensorLiteral, AssignmentsWrapAndShowSmallValues) {
  std::vector<float> many(300, 0.25f);
  const std::string a = tensor_assignment("w", many, DType::BF16, {30, 10}, "cpu");
  std::istringstream lines(a);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 120u) << line;
    ++n;
  }
  EXPECT_GT(n, 3);
  EXPECT_EQ(parse_hex_words(a), std::vector<uint32_t>(300, 0x3e80));
  EXPECT_NE(tensor_assignment("x", {-0.5f, 2.0f}, DType::F32, {2}, "cpu").find("  # -0.5, 2"), std::string::npos);
  EXPECT_EQ(int_assignment("target", {2, -100}, "cuda"), "target = torch.tensor([2, -100], device=\"cuda\")");
  EXPECT_EQ(py::float_lit(3.0), "3.0");
  EXPECT_EQ(py::float_lit(0.1), "0.1");
  EXPECT_EQ(std::stod(py::float_lit(1.1006674137072255e-06)), 1.1006674137072255e-06);
}

}  // namespace
}  // namespace flce
