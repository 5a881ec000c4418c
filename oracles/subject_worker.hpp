// The subject host: `python -m flce_subjects.subprocess_worker` of some venv, one child
// process per SubjectWorker, kept for many runs (importing torch costs seconds). flce's
// own golden, judge and signature table stay in flce's process. Inputs go to the child
// and outputs come back through shared memory (process/shared_file.hpp); requests and
// replies are JSON lines over the pipes of process/process.hpp.
//
// Why a child process and no embedded interpreter: one torch per process is what lets
// `flce gate` run base and candidate trees side by side and `flce matrix` one torch per
// release; a crashing or hanging subject takes only its child down; and on the GPU box an
// embedded interpreter read every C++ exception raised inside torch as null (docs/benchmarks-history.md,
// "GPU box host"), so the embedded host was retired (docs/architecture.md).
#pragma once
#include <sys/types.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oracles/subject.hpp"
#include "process/process.hpp"
#include "process/shared_file.hpp"

namespace flce {

struct WorkerOptions {
  std::string python;        // interpreter of the venv to run in; empty: default_python()
  std::string subjects_dir;  // put first on PYTHONPATH; empty: FLCE_SUBJECTS_DIR
  double timeout_s = 600;    // per request; past it the worker is killed (an error result)
  std::string label;         // names the worker in messages and its stderr log
  // A campaign's zygote socket (process/zygote.hpp): the host is forked there when it can be,
  // spawned otherwise. Empty: always spawned.
  std::string zygote;
};

struct SubjectInfo {
  bool flce = false, op = false;
  std::string version, error;  // error: the subject cannot be loaded there
};

// Which optional FLCE parameters the subject's callable takes, read from its signature in the
// subject host (subjects/flce_subjects/params.py). A case using one it lacks comes back
// unsupported (SubjectResult::unsupported_params); a campaign stops drawing such cases.
struct SubjectCapabilities {
  bool known = false;                 // false: not answered (error says why), or not an FLCE subject
  std::vector<std::string> params, lacks;
  std::string callable, error;
  // What the subject declares it promises (subjects/flce_subjects/contract.py); null when undeclared.
  nlohmann::json contract;
};

// The subject host's program and environment, as the flce process whose environment `getenv`
// reads would start it (a campaign builds its zygote's from a worker's environment this way).
// Empty python or subjects_dir: the defaults (default_python(), flce's subjects/).
ProcessSpec subject_host_spec(const std::string& python, const std::string& subjects_dir,
                              const std::string& stacks_path, const std::function<const char*(const char*)>& getenv);

// The interpreter subjects run in unless told otherwise: FLCE_SUBJECT_PYTHON when it names
// one, else the venv flce was configured with.
std::string default_python();

// A SubjectWorker's scratch is named after the process that holds it: a folder
// $TMPDIR/flce-worker-PID-XXXXXX and its shared-memory files flce-PID-*. Its destructor removes
// them; a process killed first (a hung case, a campaign's stop) cannot, so whoever spawned it
// calls this once it is reaped (ProcessSpec::on_reaped), or a night leaves hundreds behind.
void remove_worker_scratch(pid_t pid);

class SubjectWorker : public SubjectRunner {
 public:
  explicit SubjectWorker(WorkerOptions opt);
  ~SubjectWorker() override;
  SubjectWorker(const SubjectWorker&) = delete;
  SubjectWorker& operator=(const SubjectWorker&) = delete;

  SubjectResult run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                    const std::optional<Backend>& backend, const std::string& subject_path) override;
  std::string torch_version() override;
  Environment environment() override;  // cached: asked once per worker
  SubjectInfo describe(const std::string& subject, const std::string& subject_path);
  SubjectCapabilities capabilities(const std::string& subject, const std::string& subject_path);
  std::vector<std::string> builtin_subjects();
  bool cuda_available() { return !environment().gpu.empty(); }
  void reset();  // torch._dynamo.reset() there: forget compiled functions
  // The child echoes a request's inputs back as outputs: the transport's own test.
  SubjectResult echo(const Case& c, const Inputs& in);
  const std::string& stderr_log() const { return log_path_; }
  // The stacks report of the last call given up on (process/stacks.hpp); "" if none.
  const std::string& last_stacks() const { return last_stacks_; }
  const WorkerOptions& options() const { return opt_; }
  bool forked() const { return forked_; }  // the running host came from the zygote

 private:
  // Sends one request; nullopt with *why set when the worker died or timed out (it is then
  // restarted lazily by the next request).
  std::optional<nlohmann::json> request(const nlohmann::json& req, std::string* why);
  SubjectResult call(const std::string& op, const Case& c, const Inputs& in, nlohmann::json req);
  void start();  // throws std::runtime_error when the interpreter cannot be started
  std::string log_tail() const;

  WorkerOptions opt_;
  std::string dir_, log_path_;
  std::string stacks_path_, last_stacks_;
  Process proc_;
  std::unique_ptr<SharedFile> in_shm_, out_shm_;
  uint64_t seq_ = 0;
  std::optional<Environment> env_;
  bool forked_ = false;
  std::string died_;  // how the child ended, when the last request saw it die ("SIGSEGV", "exit-3")
};

// The process-wide subject host for default_python(), started on first use: what `flce run`,
// replay, repro and each campaign worker judge with. Throws std::runtime_error (with the
// child's stderr tail) when torch or the runner cannot be imported there.
SubjectWorker& default_subject_worker();

// A subject name flce can run: a built-in of the subject host (optionally "+workaround",
// subjects/flce_workaround enabled) or a plug-in "package.module:callable", whose import is
// judged when it runs. false with *why naming the built-ins otherwise.
bool known_subject(const std::string& name, std::string* why);

}  // namespace flce
