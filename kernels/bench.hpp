// Benchmark of the CUDA reference FLCE against the GEMM floor 6*BT*H*V / (cuBLAS bf16
// GEMM rate measured in the same run): median time, peak extra memory (flce's own
// allocation accounting), ratio to floor, and a per-phase breakdown for the largest shape.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reference_plan.hpp"

namespace flce {

struct BenchShape {
  int64_t BT, H, V;
};

struct BenchOptions {
  std::vector<BenchShape> shapes = {{4096, 4096, 32000}, {4096, 4096, 128256}, {8192, 4096, 32000},
                                    {8192, 4096, 128256}};
  int warmup = 2, reps = 10;
  size_t chunk_budget_bytes = kDefaultChunkBudgetBytes;
  bool phases = true;
  std::string csv_path;  // also write the table as CSV when set
};

// Prints the table to stdout; returns 0, or 1 after printing the error.
int run_bench(const BenchOptions& opt);

}  // namespace flce
