// CUDA faults name their kernel (fuzz/findings/cuda_fault.hpp): the parsers on recorded logs in
// tests/data/cuda_fault/ (compute-sanitizer memcheck in both "at" layouts, a C++ kernel, and a
// CUDA_LAUNCH_BLOCKING=1 traceback of a Triton launch), and the re-run's skip where no GPU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "fuzz/findings/cuda_fault.hpp"
#include "judge/signature.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

std::string sample(const char* name) {
  std::ifstream in(fs::path(FLCE_SOURCE_DIR) / "tests" / "data" / "cuda_fault" / name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

TEST(CudaFault, LaunchBlockingTracebackNamesTheTritonLaunch) {
  const CudaFault f = parse_launch_traceback(sample("launch_blocking_liger.txt"));
  EXPECT_EQ(f.error, "an illegal memory access was encountered");
  // Innermost frame outside torch and triton: Liger's launch, not the driver's __call__.
  EXPECT_EQ(f.launch,
            "/opt/venv/lib/python3.12/site-packages/liger_kernel/ops/fused_linear_cross_entropy.py:132:"
            "fused_linear_cross_entropy_forward");
  EXPECT_EQ(f.launch_code, "liger_cross_entropy_kernel[(n_rows,)](");
  EXPECT_EQ(f.kernel, "liger_cross_entropy_kernel");
  EXPECT_EQ(f.kernel_source, "launch line");
}

TEST(CudaFault, SanitizerNewLayoutNamesKernelAccessAndPlace) {
  const CudaFault f = parse_sanitizer_log(sample("memcheck_triton_new.txt"));
  EXPECT_EQ(f.kernel, "liger_cross_entropy_kernel");
  EXPECT_EQ(f.kernel_source, "compute-sanitizer");
  EXPECT_EQ(f.access, "Invalid __global__ read of size 2 bytes");
  EXPECT_EQ(f.kernel_location, "/opt/venv/lib/python3.12/site-packages/liger_kernel/ops/cross_entropy.py:118");
  EXPECT_EQ(f.thread, "thread (64,0,0) in block (511,0,0)");  // the first report's, not the second's
  EXPECT_EQ(f.address, "Access to 0x7f3a2c400000 is out of bounds");
  EXPECT_EQ(f.sanitizer_errors, 2);
  EXPECT_NE(f.error.find("unspecified launch failure"), std::string::npos) << f.error;
}

TEST(CudaFault, SanitizerOldLayoutWithInductorKernelAndItsLaunch) {
  const std::string log = sample("memcheck_inductor_old.txt");
  const CudaFault s = parse_sanitizer_log(log);
  EXPECT_EQ(s.kernel, "triton_red_fused__log_softmax_0");
  EXPECT_EQ(s.kernel_location, "/tmp/torchinductor_root/ab/cabq7xlwnnh3yiyn5bd6yqmxqvjh3plcu2nd3hqzy.py:18");
  EXPECT_EQ(s.access, "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(s.sanitizer_errors, 1);
  const CudaFault f = parse_cuda_fault_log(log);
  // Inductor's generated module is the launch (it lives outside torch/), "<string>" is not.
  EXPECT_EQ(f.launch, "/tmp/torchinductor_root/xy/cxyq2yflxmrltkq4b7s3mf5oqxqj6n3o2fpuo4d6.py:212:call");
  EXPECT_EQ(f.launch_code, "triton_red_fused__log_softmax_0.run(buf0, arg1_1, buf1, 512, 32000, stream=stream0)");
  EXPECT_EQ(f.kernel, "triton_red_fused__log_softmax_0");
  EXPECT_EQ(f.kernel_source, "compute-sanitizer");
  EXPECT_EQ(f.error, "an illegal memory access was encountered");
}

TEST(CudaFault, SanitizerCppKernelIsShortened) {
  const CudaFault f = parse_sanitizer_log(sample("memcheck_cpp_kernel.txt"));
  EXPECT_EQ(f.kernel, "at::native::index_select_kernel<float, long>");
  EXPECT_EQ(f.kernel_location, "");
  EXPECT_EQ(short_kernel_name("bulk_copy_range(unsigned char *, int)"), "bulk_copy_range");
  EXPECT_EQ(short_kernel_name("triton_poi_fused_0"), "triton_poi_fused_0");
}

TEST(CudaFault, NothingToNameInAPlainLog) {
  const CudaFault f = parse_cuda_fault_log("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
                                           "    g()\nValueError: not a CUDA error\n");
  EXPECT_TRUE(f.empty());
}

TEST(CudaFault, CommandsRunLaunchBlockingThenSanitizer) {
  CudaFaultRerun r;
  r.python = "/venv/bin/python";
  r.script = "/f/repro.py";
  EXPECT_EQ(cuda_fault_commands(r), (std::vector<std::vector<std::string>>{{"/venv/bin/python", "/f/repro.py", "--verbose"}}));
  r.sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
  const auto c = cuda_fault_commands(r);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].front(), r.sanitizer);
  EXPECT_EQ(c[1][1], "--tool");
  EXPECT_EQ(c[1][2], "memcheck");
  // the target without torch's caching allocator, else a read past a tensor inside its pool passes
  const auto& m = c[1];
  const auto env_at = std::find(m.begin(), m.end(), "/usr/bin/env");
  ASSERT_NE(env_at, m.end());
  EXPECT_EQ(*(env_at + 1), "PYTORCH_NO_CUDA_MEMORY_CACHING=1");
  EXPECT_EQ(std::vector<std::string>(env_at + 2, m.end()), (std::vector<std::string>{"/venv/bin/python", "/f/repro.py", "--verbose"}));
  EXPECT_EQ(std::string(kCudaFaultEnv[0]), "CUDA_LAUNCH_BLOCKING=1");
}

TEST(CudaFault, RerunSkipsVisiblyWithoutAGpu) {
  const fs::path dir = fs::temp_directory_path() / ("flce-cuda-fault-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // no device, whatever this machine has
  CudaFaultRerun r;
  r.python = "/nonexistent/python";  // never started
  r.script = (dir / "repro.py").string();
  const std::string status = rerun_cuda_fault(dir, r);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(status.rfind("skipped: no CUDA device", 0), 0u) << status;
  std::ifstream in(dir / "cuda_fault.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["status"], status);
  EXPECT_FALSE(fs::exists(dir / "cuda_fault.txt"));
  fs::remove_all(dir);
}

// The whole re-run on a fake interpreter that prints a recorded CUDA_LAUNCH_BLOCKING log: the
// named fields land in cuda_fault.json (under ASan this also guards the use-after-free that
// crashed the campaign after its re-run on the H200).
TEST(CudaFault, RerunWritesTheNamedKernelIntoCudaFaultJson) {
  const fs::path dir = fs::temp_directory_path() / ("flce-cuda-fault-named-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path script = dir / "repro.py";
  {
    std::ofstream s(script);
    s << "cat '" << (fs::path(FLCE_SOURCE_DIR) / "tests" / "data" / "cuda_fault" / "launch_blocking_liger.txt").string()
      << "' >&2\nexit 1\n";
  }
  CudaFaultRerun r;
  r.python = "/bin/sh";  // runs the "repro" as a shell script: argv is {python, script, --verbose}
  r.script = script.string();
  r.gpu = "0";           // the re-run believes a device is there
  r.timeout_s = 30;
  const std::string status = rerun_cuda_fault(dir, r);
  EXPECT_EQ(status, "named");
  std::ifstream in(dir / "cuda_fault.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["status"], "named");
  EXPECT_EQ(j["kernel"], "liger_cross_entropy_kernel");
  EXPECT_EQ(j["error"], "an illegal memory access was encountered");
  ASSERT_EQ(j["commands"].size(), 1u);
  EXPECT_NE(j["commands"][0]["command"].get<std::string>().find("CUDA_LAUNCH_BLOCKING=1"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "cuda_fault.txt"));
  fs::remove_all(dir);
}


// A worker whose CUDA context a fault lost must be restarted: on the H200 an unnamed one ("operation
// not supported on global/shared address space") left a compiled worker failing 1,635 cases in 30 s.
TEST(CudaFault, EveryCudaErrorTextLosesTheContextOthersDoNot) {
  for (const char* lost : {"torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
                           "AcceleratorError: CUDA error: operation not supported on global/shared address space",
                           "RuntimeError: CUDA error: device-side assert triggered",
                           "RuntimeError: CUDA error: misaligned address", "CUDA error: some error torch names later"})
    EXPECT_TRUE(cuda_context_lost(lost)) << lost;
  for (const char* fine : {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                           "TypeError: unsupported operand type(s) for *: 'torch.dtype' and 'Tensor'", ""})
    EXPECT_FALSE(cuda_context_lost(fine)) << fine;
  const SignatureTable t = SignatureTable::load_default();
  ErrorChain chain;
  chain.push_back({"torch.AcceleratorError", "CUDA error: operation not supported on global/shared address space", {}});
  const Signature s = t.classify(chain, "2.11.0");
  EXPECT_EQ(s.id, "cuda-invalid-address-space");
  EXPECT_TRUE(is_cuda_fault_signature(s.id));
  EXPECT_TRUE(is_cuda_fault_signature("cuda-illegal-memory-access"));
  EXPECT_FALSE(is_cuda_fault_signature("tier1-decomposition"));
  // main-s227 on the H200: a compiled Liger case's earlier fault surfaced at cuBLAS's launch, and
  // flce showed it as an unclassified bucket; alone the case gave an illegal memory access.
  const std::string cublas =
      "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, alpha_ptr, a, "
      "CUDA_R_16F, lda, b, CUDA_R_16F, ldb, beta_ptr, c, CUDA_R_16F, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`";
  ErrorChain gemm;
  gemm.push_back({"builtins.RuntimeError", cublas, {}});
  const Signature g = t.classify(gemm, "2.11.0");
  EXPECT_EQ(g.id, "cuda-cublas-execution-failed");
  EXPECT_TRUE(g.known);
  EXPECT_TRUE(cuda_context_lost(cublas));
  EXPECT_TRUE(is_cuda_fault_signature(g.id));
}

}  // namespace
}  // namespace flce
