// flce bench | flce reference-cuda: verbs backed by the CUDA reference (kernels/).
#include <cstdio>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "kernels/bench.hpp"
#include "kernels/device_query.hpp"
#include "judge/judge.hpp"
#include "oracles/golden.hpp"
#include "oracles/reference_cuda.hpp"

namespace flce::cli {

void add_cuda_commands(CLI::App& app) {
  {
    auto* b = app.add_subcommand("bench", "Benchmark the CUDA reference FLCE against the cuBLAS GEMM floor (GPU)");
    static BenchOptions opt;
    static std::vector<std::string> shapes;
    static size_t budget_mib = 0;
    b->add_option("--reps", opt.reps, "Timed repetitions (median reported)")->capture_default_str();
    b->add_option("--warmup", opt.warmup, "Warm-up repetitions")->capture_default_str();
    b->add_option("--shape", shapes, "BTxHxV (repeatable; default: the four shapes of docs/benchmarks-history.md)");
    b->add_option("--budget-mib", budget_mib, "Per-chunk memory budget (logits chunk + gradient group) in MiB");
    b->add_option("--csv", opt.csv_path, "Also write the table as CSV");
    b->add_flag("--no-phases{false}", opt.phases, "Skip the per-phase timing of the largest shape");
    b->callback([] {
      if (!has_cuda_device()) {
        std::fprintf(stderr, "flce bench: no CUDA device here\n");
        exit_code() = kUnsupported;
        return;
      }
      if (!shapes.empty()) {
        opt.shapes.clear();
        for (auto& s : shapes) {
          long long bt, h, v;
          if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &bt, &h, &v) != 3)
            throw CaseError("--shape", "must be BTxHxV, got " + s);
          opt.shapes.push_back({bt, h, v});
        }
      }
      if (budget_mib) opt.chunk_budget_bytes = budget_mib << 20;
      exit_code() = run_bench(opt) == 0 ? kOk : kInternal;
    });
  }
  {
    auto* r = app.add_subcommand("reference-cuda", "Run the CUDA reference on a case and judge it against fp64 (GPU)");
    static std::string file;
    r->add_option("case", file, "Case JSON file (omit for the embedded example)");
    r->callback([] {
      Case c = file.empty() ? example_case() : from_json_file(file);
      auto out = reference_cuda(c);
      if (!out) {
        std::fprintf(stderr, "flce reference-cuda: no CUDA device here\n");
        exit_code() = kUnsupported;
        return;
      }
      Inputs in = make_inputs(c);
      OracleVerdict v = judge("reference-cuda", c, golden(c, in), compute_bounds(c, in), *out);
      for (auto& o : v.outputs)
        std::printf("%-17s %-14s %-5s max_abs %.3g max_ulp %.3g rel_fro %.2e err/bound %.3g %s\n", o.output.c_str(),
                    std::string(name(o.finding)).c_str(), std::string(dtype_name(o.dtype)).c_str(), o.max_abs_err,
                    o.max_ulp, o.rel_fro, o.worst_ratio, o.detail.c_str());
      exit_code() = v.pass() ? kOk : kFinding;
    });
  }
}

}  // namespace flce::cli
