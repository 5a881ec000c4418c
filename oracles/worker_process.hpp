// One `flce worker` child of a campaign: spawned with posix_spawn (the parent never
// initializes Python or torch, and never forks), talked to over two pipes (case JSON
// lines in, result JSON lines out), its stderr appended to a log file, and killed as a
// whole process group (Inductor's compile workers included) on timeout.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace flce {

struct WorkerSpec {
  std::string exe;                // path of the flce binary
  std::vector<std::string> args;  // after argv[0]
  std::vector<std::string> env;   // "K=V" entries set on top of the parent's environment
  std::string log_path;           // the child's stderr (truncated at each spawn)
};

class WorkerProcess {
 public:
  WorkerProcess() = default;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();

  void spawn(const WorkerSpec& spec);  // throws std::runtime_error
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int out_fd() const { return out_; }
  // false when the child no longer reads (it died).
  bool send(const std::string& line);
  // Drains what is readable; complete lines go to `lines`. false at EOF.
  bool read_lines(std::vector<std::string>& lines);
  // The child's exit if it has exited (without blocking): "SIGSEGV", "exit-3", ...; "" while it runs.
  std::string poll_exit();
  // Closes stdin and waits up to `grace_s` for a clean exit, then kills. Returns how it ended.
  std::string stop(double grace_s);
  // SIGKILL to the whole process group, then reap. Returns how it ended.
  std::string kill();

 private:
  std::string reap_blocking();
  void close_fds();
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buf_;
  std::string ended_;
};

std::string signal_name(int sig);
// "SIGSEGV" for a signal, "exit-N" for an exit status (waitpid's encoding).
std::string describe_exit(int status);

}  // namespace flce
