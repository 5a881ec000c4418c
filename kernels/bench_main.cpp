// flce_bench: standalone driver for run_bench (the CLI may expose the same as `flce bench`).
//   flce_bench [--reps N] [--warmup N] [--shape BTxHxV]... [--budget-mib M] [--csv PATH] [--no-phases]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/bench.hpp"
#include "kernels/device_query.hpp"

int main(int argc, char** argv) {
  flce::BenchOptions opt;
  bool custom_shapes = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--reps") opt.reps = std::atoi(next());
    else if (a == "--warmup") opt.warmup = std::atoi(next());
    else if (a == "--budget-mib") opt.chunk_budget_bytes = static_cast<size_t>(std::atoll(next())) << 20;
    else if (a == "--csv") opt.csv_path = next();
    else if (a == "--no-phases") opt.phases = false;
    else if (a == "--shape") {
      long long bt, h, v;
      if (std::sscanf(next(), "%lldx%lldx%lld", &bt, &h, &v) != 3) {
        std::fprintf(stderr, "--shape wants BTxHxV\n");
        return 2;
      }
      if (!custom_shapes) opt.shapes.clear();
      custom_shapes = true;
      opt.shapes.push_back({bt, h, v});
    } else {
      std::fprintf(stderr, "usage: flce_bench [--reps N] [--warmup N] [--shape BTxHxV]... [--budget-mib M] "
                           "[--csv PATH] [--no-phases]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (opt.reps < 1) opt.reps = 1;
  if (!flce::has_cuda_device()) {
    std::fprintf(stderr, "flce_bench: no CUDA device\n");
    return 1;
  }
  return flce::run_bench(opt);
}
