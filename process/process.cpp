#include "process/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace flce {

std::vector<std::string> merged_environment(const std::vector<std::string>& extra, const std::vector<std::string>& unset) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv;
  }
  for (auto& k : unset) env.erase(k);
  for (auto& kv : extra) env[kv.substr(0, kv.find('='))] = kv;
  std::vector<std::string> out;
  for (auto& [k, kv] : env) out.push_back(kv);
  return out;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";  // also the kernel's OOM killer
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: return fmt::format("SIG{}", sig);
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return signal_name(WTERMSIG(status));
  return fmt::format("exit-{}", WEXITSTATUS(status));
}

Process::~Process() {
  if (alive()) kill();
  close_fds();
}

void Process::close_fds() {
  for (int* fd : {&in_, &out_, &exit_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void Process::adopt(pid_t pid, int in_fd, int out_fd, int exit_fd) {
  std::signal(SIGPIPE, SIG_IGN);
  close_fds();
  pid_ = pid;
  on_reaped_ = nullptr;  // a forked host's clean-up is its own (and its parent's)
  in_ = in_fd;
  out_ = out_fd;
  exit_fd_ = exit_fd;
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  buf_.clear();
  ended_.clear();
}

std::string Process::adopted_exit(bool block) {
  pollfd p{exit_fd_, POLLIN, 0};
  // Blocking, still bounded: the forker reports within moments of the SIGKILL sent before.
  if (::poll(&p, 1, block ? 30000 : 0) <= 0) return block ? "SIGKILL" : "";
  char msg[512];
  ssize_t n = ::recv(exit_fd_, msg, sizeof msg - 1, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return block ? adopted_exit(true) : "";
  if (n <= 0) return "SIGKILL";  // the forker is gone, and with it the child (its death signal)
  msg[n] = '\0';
  const char* e = std::strstr(msg, "\"exit\":");
  return e ? describe_exit(std::atoi(e + 7)) : (block ? adopted_exit(true) : "");
}

ChildFds::ChildFds(const ProcessSpec& spec) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  child_in = in[0], our_in = in[1];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int err = errno;
    close_all();
    throw std::runtime_error(std::string("pipe: ") + std::strerror(err));
  }
  our_out = out[0], child_out = out[1];
  log = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append_log ? O_APPEND : O_TRUNC), 0644);
  if (log < 0) {
    const int err = errno;
    close_all();
    throw std::runtime_error(fmt::format("cannot open {}: {}", spec.log_path, std::strerror(err)));
  }
}

ChildFds::~ChildFds() { close_all(); }

void ChildFds::close_all() {
  close_child_ends();
  for (int* fd : {&our_in, &our_out}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void ChildFds::close_child_ends() {
  for (int* fd : {&child_in, &child_out, &log}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void ChildFds::release_ours() { our_in = our_out = -1; }

void Process::spawn(const ProcessSpec& spec) {
  ChildFds fds(spec);
  std::signal(SIGPIPE, SIG_IGN);  // a dead child is seen as EOF or a failed write, never as a signal

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds.child_in, 0);
  posix_spawn_file_actions_adddup2(&fa, fds.child_out, 1);
  posix_spawn_file_actions_adddup2(&fa, fds.log, 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  // Own process group: a timeout kills the worker and everything it started.
  posix_spawnattr_setpgroup(&at, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) sigaddset(&defaults, s);  // the parent ignores/handles these
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &defaults);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_s{spec.exe};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env_s = merged_environment(spec.env, spec.unset);
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, spec.exe.c_str(), &fa, &at, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot spawn {}: {}", spec.exe, std::strerror(rc)));
  fds.close_child_ends();
  close_fds();
  pid_ = pid;
  on_reaped_ = spec.on_reaped;
  in_ = fds.our_in;
  out_ = fds.our_out;
  fds.release_ours();
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  buf_.clear();
  ended_.clear();
}

bool Process::send(const std::string& line) {
  if (in_ < 0) return false;
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t n = ::write(in_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;  // EPIPE: the worker is gone (SIGPIPE is ignored in the parent)
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool Process::drain() {
  if (out_ < 0) return false;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // EAGAIN: nothing more for now
    if (n == 0) return false;
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

bool Process::read_lines(std::vector<std::string>& lines) {
  const bool open = drain();
  for (size_t nl; (nl = buf_.find('\n')) != std::string::npos;) {
    lines.push_back(buf_.substr(0, nl));
    buf_.erase(0, nl + 1);
  }
  return open;
}

Process::Read Process::read_line(std::string& line, std::chrono::steady_clock::time_point deadline) {
  char chunk[65536];
  for (;;) {
    if (auto nl = buf_.find('\n'); nl != std::string::npos) {
      line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return Read::LINE;
    }
    if (out_ < 0) return Read::END;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Read::TIMEOUT;
    pollfd p{out_, POLLIN, 0};
    int pr = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (pr <= 0) continue;  // EINTR or nothing yet: the deadline decides
    ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Read::END;
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

std::string Process::wait_exit() {
  if (!alive()) return ended_;
  return reap_blocking();
}

std::string Process::poll_exit() {
  if (!alive()) return ended_;
  if (exit_fd_ >= 0) {
    ended_ = adopted_exit(false);
    return ended_.empty() ? "" : reap_blocking();
  }
  siginfo_t si{};
  // WNOWAIT: the zombie keeps the process-group id reserved while the group is swept.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0) return "";
  return reap_blocking();
}

std::string Process::reap_blocking() {
  ::kill(-pid_, SIGKILL);  // leftovers of the group (compile workers)
  if (exit_fd_ >= 0) {
    if (ended_.empty()) ended_ = adopted_exit(true);
  } else {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    ended_ = describe_exit(status);
  }
  const pid_t was = pid_;
  pid_ = -1;
  if (on_reaped_) on_reaped_(was);
  // What it wrote between the caller's last read and its exit (a last reply larger than the
  // pipe, say) stays readable through read_lines.
  drain();
  close_fds();
  return ended_;
}

std::string Process::stop(double grace_s) {
  if (!alive()) return ended_;
  if (in_ >= 0) {
    ::close(in_);
    in_ = -1;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < until) {
    std::string e = poll_exit();
    if (!e.empty()) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return kill();
}

std::string Process::kill() {
  if (!alive()) return ended_;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  return reap_blocking();
}

}  // namespace flce
