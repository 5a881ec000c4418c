// Exact tensor literals for the short reproducer (short_repro.hpp): every element written as
// its bit pattern, so NaN payloads, infinities, -0 and subnormals survive the trip through
// Python source, where a decimal literal would not keep a NaN's bits.
//
//   torch.tensor([0x3f80, 0xbf80], dtype=torch.uint16).view(torch.bfloat16).reshape(2, 1)
//
// A bf16/fp16 tensor holding a NaN is written as its fp32 staging values and converted with
// `.to(dtype)`, as flce's subject host converts it: torch picks the NaN's bits itself (its
// vectorized CPU loop gives 0xffff, the scalar tail 0x7fc0), so only its own conversion
// hands the subject the same bits.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "case/dtype.hpp"

namespace flce {

// The bits of v (exact in d) as d stores them: 16 bits for bf16/fp16, 32 for fp32.
uint32_t storage_bits(float v, DType d);
// The value of d's bits, exactly, as fp32 (NaN payloads kept as far as fp32 holds them).
float storage_value(uint32_t bits, DType d);

// "0x3f80, 0xbf80, ..." in the width of d (4 hex digits for bf16/fp16, 8 for fp32).
std::string hex_words(const std::vector<uint32_t>& bits, DType d);
// The words of such a list, or of a whole literal, in order (for tests and checks).
std::vector<uint32_t> parse_hex_words(std::string_view text);

struct TensorLiteral {
  std::vector<uint32_t> bits;  // the words, in `given`'s width
  DType given;                 // d, or fp32 when a NaN needs torch's own conversion into d
  bool converted = false;      // the words are fp32 staging values, converted by `.to(d)`
  std::string suffix;          // what follows the list: ", dtype=torch.uint16).view(torch.bfloat16).reshape(2, 1)"
  std::string python() const;  // "torch.tensor([<words>]<suffix>" on one line
};

// The literal of fp32 staging values that are exact in d, on `device` ("cpu" or "cuda"),
// reshaped to shape (a 1-d shape needs no reshape).
TensorLiteral tensor_literal(const std::vector<float>& values, DType d, const std::vector<int64_t>& shape,
                             const std::string& device);

// Python source of the assignment `name = <literal>`, wrapped; with a comment of the decimal
// values when the tensor is small enough for one line to show them.
std::string tensor_assignment(const std::string& name, const std::vector<float>& values, DType d,
                              const std::vector<int64_t>& shape, const std::string& device,
                              const std::string& note = "");

// Integers (targets): `torch.tensor([2, -100], device="cuda")`, wrapped like the above.
std::string int_assignment(const std::string& name, const std::vector<int64_t>& values, const std::string& device,
                           const std::string& note = "");

}  // namespace flce
