#include "kernels/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/device_inputs.hpp"
#include "kernels/dtype_out_gemm.hpp"
#include "kernels/host_transfer.hpp"
#include "kernels/reference_flce.hpp"

namespace flce {
namespace {

struct Row {
  BenchShape shape;
  std::string accum;
  double gemm_tflops = 0, floor_ms = 0, median_ms = 0, min_ms = 0, peak_gib = 0, loss = 0;
  int64_t chunk_rows = 0, n_chunks = 0, group_rows = 0, n_groups = 0;
};

// Median and min over reps of fn() timed with CUDA events on `s`.
std::pair<double, double> time_ms(cudaStream_t s, int warmup, int reps, const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  cudaEvent_t a, b;
  FLCE_CUDA_CHECK(cudaEventCreate(&a), "bench");
  FLCE_CUDA_CHECK(cudaEventCreate(&b), "bench");
  for (int i = 0; i < reps; ++i) {
    FLCE_CUDA_CHECK(cudaEventRecord(a, s), "bench");
    fn();
    FLCE_CUDA_CHECK(cudaEventRecord(b, s), "bench");
    FLCE_CUDA_CHECK(cudaEventSynchronize(b), "bench");
    float ms = 0;
    FLCE_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b), "bench");
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

Case bench_case(const BenchShape& sh, bool accum_fp32) {
  Case c;
  c.kind = Kind::FLCE;
  c.BT = sh.BT, c.H = sh.H, c.V = sh.V;
  c.input_dtype = c.weight_dtype = DType::BF16;
  if (accum_fp32) c.accum_dtype = DType::F32;
  c.reduction = Reduction::MEAN;
  c.device = Device::CUDA;
  c.seed = 1;
  return c;
}

// cuBLASLt bf16 x bf16 -> bf16 logits GEMM [BT,H] @ [H,V]: the rate the floor uses.
double gemm_tflops(const DeviceInputs& in, cudaStream_t s, int warmup, int reps) {
  DeviceBuffer d(static_cast<size_t>(in.BT) * in.V * 2, s, "bench gemm"), ws(kGemmWorkspaceBytes, s, "bench gemm");
  GemmDesc g;
  g.M = in.BT, g.N = in.V, g.K = in.H;
  g.trans_b = true;
  g.lda = in.H, g.ldb = in.H, g.ldd = in.V;
  g.ab_type = g.cd_type = DType::BF16;
  auto lt = default_lt_handle();
  auto [med, mn] = time_ms(s, warmup, std::max(reps, 10), [&] {
    gemm_dtype_out(lt, g, in.x.data(), in.w.data(), nullptr, d.get(), s, ws.get(), ws.bytes(), "bench gemm");
  });
  (void)mn;
  return 2.0 * in.BT * in.H * in.V / (med * 1e-3) / 1e12;
}

void print_row(const Row& r) {
  std::printf("%6lld %5lld %7lld %5s | %8.2f %8.2f %8.2f %6.3f | %7.1f | %6.3f | %5lld/%-5lld x %-2lld | %.6f\n",
              (long long)r.shape.BT, (long long)r.shape.H, (long long)r.shape.V, r.accum.c_str(), r.median_ms,
              r.min_ms, r.floor_ms, r.median_ms / r.floor_ms, r.gemm_tflops, r.peak_gib, (long long)r.chunk_rows,
              (long long)r.group_rows, (long long)r.n_groups, r.loss);
  std::fflush(stdout);
}

}  // namespace

int run_bench(const BenchOptions& opt) {
  try {
    int dev = 0;
    cudaDeviceProp prop{};
    FLCE_CUDA_CHECK(cudaGetDevice(&dev), "bench");
    FLCE_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev), "bench");
    std::printf("flce reference bench on %s (sm_%d%d, %d SMs, %.1f GiB)\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
    // Keep freed pool memory cached so repeated calls do not pay for cudaMalloc.
    cudaMemPool_t pool;
    FLCE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev), "bench");
    uint64_t keep = UINT64_MAX;
    FLCE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "bench");
    cudaStream_t s;
    FLCE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "bench");

    std::printf("    BT     H       V accum |   median      min    floor  ratio | GEMM TF | peakGiB | rows/group x groups | loss\n");
    std::vector<Row> rows;
    const BenchShape* biggest = nullptr;
    for (auto& sh : opt.shapes)
      if (!biggest || sh.BT * sh.V > biggest->BT * biggest->V) biggest = &sh;

    for (auto& sh : opt.shapes) {
      Case base = bench_case(sh, true);
      DeviceInputs in = make_device_inputs(base, s);
      const double tf = gemm_tflops(in, s, opt.warmup, opt.reps);
      const double floor_ms = 6.0 * sh.BT * sh.H * sh.V / (tf * 1e12) * 1e3;
      for (bool fp32 : {true, false}) {
        Case c = bench_case(sh, fp32);
        ReferenceOptions ro;
        ro.chunk_budget_bytes = opt.chunk_budget_bytes;
        Row r;
        r.shape = sh;
        r.accum = fp32 ? "fp32" : "none";
        r.gemm_tflops = tf;
        r.floor_ms = floor_ms;
        FLCE_CUDA_CHECK(cudaStreamSynchronize(s), "bench");
        const int64_t before = alloc_stats().current_bytes;
        reset_alloc_peak();
        {
          ReferenceResult res = reference_flce_cuda(c, in, s, ro);  // also the first warm-up
          r.loss = tensor_to_host(res.tensors.at("loss"), s).data.at(0);
          r.chunk_rows = res.plan.rows;
          r.n_chunks = res.plan.n_chunks;
          r.group_rows = res.plan.group_rows;
          r.n_groups = res.plan.n_groups;
        }
        FLCE_CUDA_CHECK(cudaStreamSynchronize(s), "bench");
        r.peak_gib = (alloc_stats().peak_bytes - before) / 1073741824.0;
        auto [med, mn] = time_ms(s, std::max(opt.warmup - 1, 0), opt.reps,
                                 [&] { ReferenceResult res = reference_flce_cuda(c, in, s, ro); });
        r.median_ms = med;
        r.min_ms = mn;
        if (!std::isfinite(r.loss)) throw std::runtime_error("bench: non-finite loss");
        print_row(r);
        rows.push_back(r);
      }
      if (opt.phases && &sh == biggest) {
        PhaseTimer timer(s);
        ReferenceOptions ro;
        ro.chunk_budget_bytes = opt.chunk_budget_bytes;
        ro.timer = &timer;
        for (bool fp32 : {true, false}) {
          timer.clear();
          { ReferenceResult res = reference_flce_cuda(bench_case(sh, fp32), in, s, ro); }
          auto totals = timer.totals_ms();
          double sum = 0;
          for (auto& [k, v] : totals) sum += v;
          std::printf("  phases BT=%lld V=%lld accum=%s (one run, %.2f ms in phases):\n", (long long)sh.BT,
                      (long long)sh.V, fp32 ? "fp32" : "none", sum);
          for (auto& [k, v] : totals) std::printf("    %-18s %9.3f ms  %5.1f%%\n", k.c_str(), v, 100.0 * v / sum);
        }
      }
    }
    if (!opt.csv_path.empty()) {
      std::ofstream f(opt.csv_path);
      f << "BT,H,V,accum,median_ms,min_ms,floor_ms,ratio,gemm_tflops,peak_gib,chunk_rows,n_chunks,group_rows,n_groups,loss\n";
      for (auto& r : rows)
        f << r.shape.BT << ',' << r.shape.H << ',' << r.shape.V << ',' << r.accum << ',' << r.median_ms << ','
          << r.min_ms << ',' << r.floor_ms << ',' << r.median_ms / r.floor_ms << ',' << r.gemm_tflops << ','
          << r.peak_gib << ',' << r.chunk_rows << ',' << r.n_chunks << ',' << r.group_rows << ','
          << r.n_groups << ',' << r.loss << '\n';
    }
    FLCE_CUDA_CHECK(cudaStreamSynchronize(s), "bench");
    FLCE_CUDA_CHECK(cudaStreamDestroy(s), "bench");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flce bench failed: %s\n", e.what());
    return 1;
  }
}

}  // namespace flce
