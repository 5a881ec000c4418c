// Every input tensor of a Case generated on the GPU from its GenSpec with the same
// per-element functions as the CPU's make_inputs (case/gen.hpp), in storage dtype:
// fp32 as float, fp16/bf16 as their 16-bit patterns, targets as int64. Bitwise equal to
// make_inputs (tests/gpu_reference_test.cpp checks it).
#pragma once
#include <cuda_runtime.h>

#include "kernels/device_buffer.hpp"
#include "case/case.hpp"
#include "case/gen.hpp"

namespace flce {

struct DeviceInputs {
  GenSpec spec{};
  int64_t BT = 0, H = 0, V = 0, batch = 1;
  DeviceTensor x;           // [batch*BT, H] input_dtype   (op kinds: B operand)
  DeviceTensor w;           // [V, H]        weight_dtype  (flce)
  DeviceTensor bias;        // [V]           weight_dtype  (if case.bias)
  DeviceTensor ce_weight;   // [V]           fp32          (if case.ce_weight)
  DeviceTensor target;      // [BT]          int64         (flce)
  DeviceTensor token_grad;  // [BT]          fp32          (flce)
  DeviceTensor op_a;        // [batch, V, BT] input_dtype  (op kinds)
  DeviceTensor op_c;        // [batch, V, H]  op_out_dtype (addmm/baddbmm)
};

// Absent tensors stay empty. All work is ordered on `stream`; no host sync.
DeviceInputs make_device_inputs(const Case& c, cudaStream_t stream, int64_t BT_override = 0);

}  // namespace flce
