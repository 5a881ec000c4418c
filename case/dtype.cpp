#include "case/dtype.hpp"

namespace flce {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "fp32";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::F64: return "fp64";
    case DType::I64: return "int64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64})
    if (dtype_name(d) == s) return d;
  return std::nullopt;
}

int dtype_mantissa_bits(DType d) {
  switch (d) {
    case DType::F32: return 24;
    case DType::F16: return 11;
    case DType::BF16: return 8;
    case DType::F64: return 53;
    case DType::I64: return 64;
  }
  return 0;
}

double dtype_eps(DType d) {
  // unit roundoff: 2^-p
  double u = 1.0;
  for (int i = 0; i < dtype_mantissa_bits(d); ++i) u *= 0.5;
  return u;
}

}  // namespace flce
