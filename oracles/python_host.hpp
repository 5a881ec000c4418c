// The subject oracles: an embedded CPython (the venv set-up made) running a subject
// eager or compiled through subjects/flce_subjects/runner.py. Tensors cross the
// boundary without copies (libtorch at::Tensor <-> torch.Tensor share storage);
// this header stays free of torch headers so most of flce compiles fast.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "case.hpp"
#include "inputs.hpp"
#include "outputs.hpp"
#include "signature.hpp"

namespace flce {

enum class SubjectStatus { OK, ERROR, UNSUPPORTED };
std::string_view name(SubjectStatus s);

struct SubjectResult {
  SubjectStatus status = SubjectStatus::ERROR;
  Outputs outputs;       // host copies for judging (widened to double)
  std::string reason;    // unsupported: why
  ErrorChain chain;      // error: the whole exception chain, outermost first
  std::string phase;     // error: setup | forward | backward
  std::vector<std::string> paths;  // subject code paths seen (e.g. addmm.dtype_out)
  std::string subject_version;
  double wall_ms = 0;
  std::string died;  // the subject's own process ended during this call ("SIGSEGV", "exit-3"): child runners
};

struct Environment {
  std::string python, torch, triton, cuda, gpu, capability, platform, liger;
  std::string to_json() const;
};

class PythonHost {
 public:
  // Starts the interpreter once per process (idempotent). Throws std::runtime_error
  // with the Python traceback if the venv or the runner cannot be imported.
  static PythonHost& instance();

  SubjectResult run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                    const std::optional<Backend>& backend = std::nullopt, const std::string& subject_path = "");
  // Forget compiled functions (torch._dynamo.reset()).
  void reset();
  Environment environment();
  std::string torch_version();
  // Built-in subject names the runner knows.
  std::vector<std::string> builtin_subjects();

  // Zero-copy evidence: data_ptr of a tensor made in C++ as seen by Python, and of a
  // tensor made in Python as seen by C++ (pairs must be equal). device: "cpu"|"cuda".
  struct ZeroCopyProbe {
    uintptr_t cxx_in = 0, py_in = 0, py_out = 0, cxx_out = 0;
  };
  ZeroCopyProbe zero_copy_probe(const std::string& device);
  bool cuda_available();

 private:
  PythonHost();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flce
