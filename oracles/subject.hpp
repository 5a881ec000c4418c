// What a subject oracle hands back: its outputs (widened to double for the judge), or the
// whole exception chain it raised, or why it cannot run here. Subjects are Python plug-ins;
// they run in a child Python process (subject_worker.hpp), never inside flce's own.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "case/case.hpp"
#include "case/inputs.hpp"
#include "case/outputs.hpp"

namespace flce {

struct ErrorLink {
  std::string type;     // qualified exception class
  std::string message;
  std::vector<std::string> frames;  // "path:line:function", innermost last
};
using ErrorChain = std::vector<ErrorLink>;  // outermost first

enum class SubjectStatus { OK, ERROR, UNSUPPORTED };
std::string_view name(SubjectStatus s);

struct SubjectResult {
  SubjectStatus status = SubjectStatus::ERROR;
  Outputs outputs;       // host copies for judging (widened to double)
  std::string reason;    // unsupported: why
  // unsupported because the subject's callable lacks parameters the case uses (its signature,
  // subjects/flce_subjects/params.py): their names, e.g. {"return_token_accuracy"}
  std::vector<std::string> unsupported_params;
  ErrorChain chain;      // error: the whole exception chain, outermost first
  std::string phase;     // error: setup | forward | backward | worker
  std::vector<std::string> paths;  // subject code paths seen (e.g. addmm.dtype_out)
  std::string subject_version;
  double wall_ms = 0;      // the subject's own call, as the child timed it
  double transfer_ms = 0;  // inputs into and outputs out of shared memory, both sides
  std::string died;  // the subject's process ended during this call ("SIGSEGV", "exit-3")
};

struct Environment {
  std::string python, torch, triton, cuda, gpu, capability, platform, liger;
  std::string to_json() const;
};

// Where a subject runs: a child Python process of some venv (SubjectWorker), or a test double.
struct SubjectRunner {
  virtual ~SubjectRunner() = default;
  virtual SubjectResult run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                            const std::optional<Backend>& backend, const std::string& subject_path) = 0;
  virtual std::string torch_version() = 0;
  virtual Environment environment() = 0;
};

}  // namespace flce
