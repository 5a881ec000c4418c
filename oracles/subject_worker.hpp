// A subject oracle in a child process: `python -m flce_subjects.subprocess_worker` of any
// venv. One process holds one tree of a package and one torch, so `flce gate` runs base
// and candidate in two of these, and `flce matrix` one per torch release; flce's own
// golden, judge and signature table stay in this process (run_case with RunOptions::runner).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <sys/types.h>

#include "differential.hpp"

namespace flce {

struct WorkerOptions {
  std::string python;       // interpreter of the venv to run in; empty: the one flce embeds
  std::string subjects_dir;  // put first on PYTHONPATH; empty: FLCE_SUBJECTS_DIR
  double timeout_s = 600;   // per request; past it the worker is killed (an error result)
  std::string label;        // names the worker in messages and its stderr log
};

struct SubjectInfo {
  bool flce = false, op = false;
  std::string version, error;  // error: the subject cannot be loaded there
};

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
  void reset();
  const std::string& stderr_log() const { return log_path_; }
  const WorkerOptions& options() const { return opt_; }

 private:
  // Sends one request; nullopt with *why set when the worker died or timed out (it is then
  // restarted lazily by the next request).
  std::optional<nlohmann::json> request(const nlohmann::json& req, std::string* why);
  void start();  // throws std::runtime_error when the interpreter cannot be started
  void stop(bool kill);
  std::string log_tail() const;

  WorkerOptions opt_;
  std::string dir_, log_path_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_;  // bytes read past the last reply line
  uint64_t seq_ = 0;
  std::optional<Environment> env_;
  std::string died_;  // how the child ended, when the last request saw it die ("SIGSEGV", "exit-3")
};

}  // namespace flce
