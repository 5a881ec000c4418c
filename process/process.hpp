// One child process of flce: campaign workers (`flce worker`), shrink workers and subject
// processes (`python -m flce_subjects.subprocess_worker`) all start here. posix_spawn (flce
// never forks a process that may hold CUDA or threads), two pipes (requests in, reply lines
// out), stderr to a log file, its own process group so a kill also ends what it started
// (Inductor's compile workers), and a timeout on every wait.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace flce {

struct ProcessSpec {
  std::string exe;                   // path of the program
  std::vector<std::string> args;     // after argv[0]
  std::vector<std::string> env;      // "K=V" entries set on top of the parent's environment
  std::vector<std::string> unset;    // names removed from the parent's environment
  std::string log_path;              // the child's stderr
  bool append_log = false;           // false: truncated at each spawn
  std::string cwd;                   // its working directory; empty: ours
  // Called with its pid once it is reaped: what it leaves behind when killed before its own
  // clean-up ran (a subject worker's scratch folder and shared memory, oracles/subject_worker.hpp).
  std::function<void(pid_t)> on_reaped;
};

// What a new child starts with, all close-on-exec until handed over: a pipe to its stdin, a pipe
// from its stdout, and its stderr log (spec.log_path). Whatever is still held is closed at the end.
struct ChildFds {
  int child_in = -1, our_in = -1;    // its stdin; our write end
  int our_out = -1, child_out = -1;  // our read end; its stdout
  int log = -1;                      // its stderr
  explicit ChildFds(const ProcessSpec& spec);  // throws std::runtime_error saying what failed
  ChildFds(const ChildFds&) = delete;
  ChildFds& operator=(const ChildFds&) = delete;
  ~ChildFds();
  void close_child_ends();  // once the child holds its own copies
  void release_ours();      // once a Process owns our ends

 private:
  void close_all();
};

class Process {
 public:
  Process() = default;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  void spawn(const ProcessSpec& spec);  // throws std::runtime_error naming the program
  // A child another process forked for us (process/zygote.hpp): it is not ours to wait for, so
  // its exit comes as a message on `exit_fd` ({"exit": waitstatus}; EOF: lost with its parent).
  void adopt(pid_t pid, int in_fd, int out_fd, int exit_fd);
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int out_fd() const { return out_; }
  // false when the child no longer reads (it died; SIGPIPE is ignored from the first spawn).
  bool send(const std::string& line);
  // Drains what is readable without blocking; complete lines go to `lines`. false at EOF, or
  // once the child is reaped (the lines it wrote before its exit still come out, once).
  bool read_lines(std::vector<std::string>& lines);
  enum class Read { LINE, END, TIMEOUT };
  // Blocks for one reply line until `deadline`. END: the child closed its stdout (it died
  // or exited; poll_exit()/wait_exit() say how).
  Read read_line(std::string& line, std::chrono::steady_clock::time_point deadline);
  // The child's exit if it has exited (without blocking): "SIGSEGV", "exit-3", ...; "" while it runs.
  std::string poll_exit();
  // Waits for an exit already under way (after END), then sweeps its group.
  std::string wait_exit();
  // Closes stdin and waits up to `grace_s` for a clean exit, then kills. Returns how it ended.
  std::string stop(double grace_s);
  // SIGKILL to the whole process group, then reap. Returns how it ended.
  std::string kill();
  const std::string& ended() const { return ended_; }

 private:
  std::string reap_blocking();
  bool drain();  // the pipe into buf_; false at EOF or closed
  void close_fds();
  std::string adopted_exit(bool block);  // "" while it runs (block: wait for the message)
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  int exit_fd_ = -1;  // an adopted child's: where its exit is reported
  std::string buf_;
  std::string ended_;
  std::function<void(pid_t)> on_reaped_;
};

std::string signal_name(int sig);
// The environment a child gets: this process's, `unset` removed, `extra` ("K=V") on top.
std::vector<std::string> merged_environment(const std::vector<std::string>& extra, const std::vector<std::string>& unset);
// "SIGSEGV" for a signal, "exit-N" for an exit status (waitpid's encoding).
std::string describe_exit(int status);

}  // namespace flce
