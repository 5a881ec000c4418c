// CUDA faults name their kernel. A case that poisons the CUDA context (an illegal address,
// a device-side assert) is reported asynchronously, at whatever call synchronizes next, so
// the campaign's traceback points nowhere near the culprit. A finding with cuda_poisoned set
// is therefore re-run in a fresh process with CUDA_LAUNCH_BLOCKING=1 (the error is raised at
// the launch) and, when compute-sanitizer is found, once more under `compute-sanitizer
// --tool memcheck` (it names the kernel and the access). Both logs are kept as cuda_fault.txt
// in the finding directory and what they say as cuda_fault.json; `flce report` shows it.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz/findings/campaign_shrink.hpp"

namespace flce {

struct CudaFault {
  std::string error;            // the CUDA error ("an illegal memory access was encountered")
  std::string kernel;           // the faulting kernel: compute-sanitizer's, else the launch line's callee
  std::string kernel_source;    // "compute-sanitizer" | "launch line" | ""
  std::string access;           // compute-sanitizer's report ("Invalid __global__ read of size 4 bytes")
  std::string kernel_location;  // where in the kernel ("cross_entropy.py:43"), when the sanitizer says
  std::string thread;           // "thread (18,0,0) in block (0,0,0)"
  std::string address;          // "Address 0x7f.. is out of bounds ..." (its first line)
  std::string launch;           // the Python frame that launched it: "path:line:function"
  std::string launch_code;      // that frame's source line
  int sanitizer_errors = -1;    // compute-sanitizer's ERROR SUMMARY (-1: no summary seen)
  bool empty() const { return kernel.empty() && launch.empty() && error.empty() && access.empty(); }
};

// compute-sanitizer memcheck output: the first report ("Invalid __global__ read ...") and its
// "at ..." line in either layout ("at kernel+0x1a0 in file.py:43" and the older "at 0x1a0 in
// file.py:43:kernel" / "at 0x1a0 in void kernel<..>(..)"), thread, address, error count.
CudaFault parse_sanitizer_log(const std::string& log);
// A Python traceback (Python's format) ending in a CUDA error: the error and the innermost
// frame outside torch and triton (the subject's launch); the kernel is read off its line
// (`kernel[grid](...)` for Triton, `triton_poi_fused_0.run(...)` for Inductor's code).
CudaFault parse_launch_traceback(const std::string& log);
// Both over one log; compute-sanitizer's kernel name wins over the launch line's.
CudaFault parse_cuda_fault_log(const std::string& log);
nlohmann::ordered_json cuda_fault_json(const CudaFault& f);

// "kernel" from "void kernel<float>(float*, int)" or "kernel(int *)": the name a reader greps for.
std::string short_kernel_name(const std::string& demangled);

// compute-sanitizer: $FLCE_COMPUTE_SANITIZER ("" there: none), else on PATH, else under
// $CUDA_HOME, $CUDA_PATH or /usr/local/cuda (bin/). "" when none.
std::string find_compute_sanitizer();

struct CudaFaultRerun {
  std::string python;         // the subject's interpreter
  std::string script;         // a standalone repro.py of the finding (repro/emit_python.hpp)
  std::string pythonpath;     // prepended to PYTHONPATH (flce's subjects/)
  std::string gpu;            // CUDA_VISIBLE_DEVICES for the re-run ("" inherit)
  std::string sanitizer;      // compute-sanitizer's path, "" to skip that run
  double timeout_s = 600;     // each run
};

// The runs, in order: the launch-blocking one, then the sanitizer one (when configured).
// Each is argv; the environment is kCudaFaultEnv plus PYTHONPATH and CUDA_VISIBLE_DEVICES; the
// sanitizer's target also runs without torch's caching allocator (kNoCachingAllocator, through env).
std::vector<std::vector<std::string>> cuda_fault_commands(const CudaFaultRerun& r);
inline constexpr const char* kNoCachingAllocator = "PYTORCH_NO_CUDA_MEMORY_CACHING=1";  // the sanitizer run's
inline constexpr const char* kCudaFaultEnv[] = {"CUDA_LAUNCH_BLOCKING=1", "PYTHONFAULTHANDLER=1",
                                                "TORCHINDUCTOR_COMPILE_THREADS=1"};

// Runs them (each in a fresh process, killed at the timeout), writes
// <finding_dir>/cuda_fault.txt (both logs, each under the command line that made it) and
// <finding_dir>/cuda_fault.json ({"status", "commands", ...cuda_fault_json}), and returns the
// status: "named" (a kernel or a launch was found), "unnamed: <why>", or "skipped: <why>"
// (no CUDA device here: nothing is run, and cuda_fault.json says so).
std::string rerun_cuda_fault(const std::filesystem::path& finding_dir, const CudaFaultRerun& r);

// The shrink phase's hook (campaign_shrink.cpp) for a finding with cuda_poisoned: the re-run
// above with the finding's repro.py (the shrunk case), else one emitted from its case.json
// (cuda_fault_repro.py), on `gpu`; prints "cuda fault <id>: <status>" unless o.quiet.
std::string name_cuda_fault(const std::filesystem::path& finding_dir, const std::string& signature,
                            const ShrinkOptions& o, const std::string& gpu, const std::string& signatures_json);

}  // namespace flce
