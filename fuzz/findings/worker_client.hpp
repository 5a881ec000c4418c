// How an `flce worker` is started (campaign slots, analysis, shrinking alike), and a
// synchronous client of one: a case in, its outcome line and report out. A worker that dies
// or overruns becomes that try's outcome ("crash:SIGSEGV@eager", "timeout@compiled"), exactly
// as the exploration phase names them, and the next try gets a fresh worker.
#pragma once
#include <csignal>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process/process.hpp"

namespace flce {

struct WorkerLaunch {
  std::string exe;  // the flce binary
  std::string subject, subject_path;
  std::string baseline, baseline_path;  // a differential campaign's second subject ("": none)
  double mem_gib = 16;                  // RLIMIT_DATA; 0: none
  std::string gpu;                      // CUDA_VISIBLE_DEVICES ("": inherit)
  std::string log_path;                 // the worker's stderr (and the subject host's)
  int threads = 1;                      // CPUs it may use: OpenMP's and Inductor's compile threads
  // Inductor's and Triton's on-disk caches, shared by the workers of one campaign (a resumed run
  // reuses them); "": one Inductor cache next to the log (per slot), Triton's default.
  std::string cache_dir;
  // Triton's box layer under cache_dir's (subjects/flce_subjects/triton_box_cache.py): a kernel
  // any campaign on this box compiled is a hit; "": none.
  std::string triton_box;
  std::string zygote;  // the campaign's zygote socket (process/zygote.hpp); "": hosts are spawned
};
ProcessSpec worker_spec(const WorkerLaunch& w);

// The campaign's subject-host zygote (subjects/flce_subjects/zygote.py) for `w`'s subject: the
// interpreter and environment a worker's subject host gets (worker_spec's, then
// subject_host_spec's over it), so that a host forked there matches one spawned.
ProcessSpec zygote_spec(const WorkerLaunch& w, const std::string& socket_path, const std::string& stacks_path);

// Where a campaign's Triton box layer lives: FLCE_TRITON_BOX_CACHE ("off": none), else
// ${XDG_CACHE_HOME:-$HOME/.cache}/flce/triton.
std::string triton_box_dir();

// GPUs a campaign (or a re-run) can spread workers over: the ids in CUDA_VISIBLE_DEVICES when set, else
// one per /proc/driver/nvidia/gpus entry (the parent never initializes CUDA itself).
std::vector<std::string> visible_gpus();

// CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();

struct WorkerReply {
  std::string outcome;
  nlohmann::json report;  // null when the worker died or overran
  nlohmann::json baseline_report;  // differential workers: the baseline's run
  std::string baseline_outcome;
};

class WorkerClient {
 public:
  // `stop`: set by SIGINT/SIGTERM: the current try ends as a crash of the killed worker.
  WorkerClient(WorkerLaunch launch, double case_timeout_s, volatile std::sig_atomic_t* stop = nullptr);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // `lane`: "eager" (no torch.compile) or "compiled". Throws std::runtime_error when a worker
  // cannot start or refuses the case (bad input).
  WorkerReply run_case(const nlohmann::json& case_json, const std::string& lane);
  // A run that only asks whether the case fails, and how: no backend ladder walk.
  WorkerReply probe_case(const nlohmann::json& case_json, const std::string& lane);
  WorkerReply run_sequence(const nlohmann::json& sequence_json, const std::string& lane);
  // The next request goes to a new process (nothing it ran before can matter).
  void restart();

 private:
  WorkerReply ask(nlohmann::json req);
  void start();
  bool next_line(double timeout_s, nlohmann::json* out, std::string* how);

  WorkerLaunch launch_;
  double case_timeout_s_;
  volatile std::sig_atomic_t* stop_;
  std::unique_ptr<Process> proc_;
  std::vector<std::string> pending_;
  int n_ = 0;
};

}  // namespace flce
