// Device-side element access by runtime DType, and correctly rounded double -> storage
// dtype conversion. Bit patterns come from case/dtype.hpp so the GPU rounds exactly
// like the CPU oracles.
#pragma once
#include <cstdint>

#include "case/dtype.hpp"

namespace flce {

// Reads element i of a buffer of storage dtype `d` as fp32 (F64 narrows with RNE).
__device__ __forceinline__ float load_as_f32(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::BF16: return bf16_bits_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::F16: return f16_bits_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::F64: return static_cast<float>(static_cast<const double*>(p)[i]);
    case DType::I64: return static_cast<float>(static_cast<const int64_t*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ double load_as_f64(const void* p, DType d, int64_t i) {
  if (d == DType::F64) return static_cast<const double*>(p)[i];
  if (d == DType::I64) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  return static_cast<double>(load_as_f32(p, d, i));
}

// Stores fp32 value v (rounded RNE to `d`) as element i.
__device__ __forceinline__ void store_from_f32(void* p, DType d, int64_t i, float v) {
  switch (d) {
    case DType::BF16: static_cast<uint16_t*>(p)[i] = f32_to_bf16_bits(v); break;
    case DType::F16: static_cast<uint16_t*>(p)[i] = f32_to_f16_bits(v); break;
    case DType::F64: static_cast<double*>(p)[i] = v; break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

// double -> fp32 with round-to-odd: truncate, then set the last bit if inexact. A value
// rounded to odd with >= p+2 bits rounds to any p-bit format (bf16, fp16) exactly as the
// double itself would, so double -> fp32(odd) -> bf16/fp16 is a single correct rounding.
__device__ __forceinline__ float f64_to_f32_odd(double x) {
  float f = __double2float_rz(x);
  if (static_cast<double>(f) != x && x == x) f = bits_f32(f32_bits(f) | 1u);
  return f;
}

// Stores double v rounded once (RNE) to `d`.
__device__ __forceinline__ void store_from_f64(void* p, DType d, int64_t i, double v) {
  switch (d) {
    case DType::F64: static_cast<double*>(p)[i] = v; break;
    case DType::F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::I64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    default: store_from_f32(p, d, i, f64_to_f32_odd(v)); break;
  }
}

// Typed 2-byte/4-byte stores for the templated CE kernel.
struct Bf16Bits { uint16_t b; };
struct F16Bits { uint16_t b; };
__device__ __forceinline__ void store_elem(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_elem(Bf16Bits* p, float v) { p->b = f32_to_bf16_bits(v); }
__device__ __forceinline__ void store_elem(F16Bits* p, float v) { p->b = f32_to_f16_bits(v); }
__device__ __forceinline__ uint16_t to_bits(Bf16Bits*, float v) { return f32_to_bf16_bits(v); }
__device__ __forceinline__ uint16_t to_bits(F16Bits*, float v) { return f32_to_f16_bits(v); }

}  // namespace flce
