#include "process/proc_tree.hpp"

#include <dirent.h>

#include <csignal>
#include <fmt/format.h>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "process/stacks.hpp"

namespace flce {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// "Field:\tvalue" of /proc/.../status.
std::string status_field(const std::string& status, const std::string& field) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) {
      std::string v = line.substr(field.size() + 1);
      const size_t a = v.find_first_not_of(" \t");
      return a == std::string::npos ? "" : v.substr(a);
    }
  return "";
}

bool has_signal(const std::string& hex_mask, int sig) {
  if (hex_mask.empty()) return false;
  try {
    return (std::stoull(hex_mask, nullptr, 16) >> (sig - 1)) & 1ULL;
  } catch (const std::exception&) {
    return false;
  }
}

// Field 3 (state) and 4 (ppid) of /proc/<pid>/stat: after the ")" that ends comm.
bool stat_fields(const std::string& stat, char* state, pid_t* ppid) {
  const size_t rp = stat.rfind(')');
  if (rp == std::string::npos) return false;
  std::istringstream in(stat.substr(rp + 1));
  long pp = 0;
  if (!(in >> *state >> pp)) return false;
  *ppid = static_cast<pid_t>(pp);
  return true;
}

const char* state_words(char s) {
  switch (s) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "uninterruptible (in the kernel: signals wait until it returns)";
    case 'T': return "stopped";
    case 't': return "traced";
    case 'Z': return "zombie (exited, not reaped)";
    case 'X': return "dead";
    case 'I': return "idle";
    default: return "?";
  }
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.emplace_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

std::string command_line(pid_t pid) {
  std::string c = slurp(fmt::format("/proc/{}/cmdline", pid));
  for (char& ch : c)
    if (ch == '\0') ch = ' ';
  c = trim(c);
  return c.size() > 160 ? c.substr(0, 157) + "..." : c;
}

// One thread: "S futex (wchan futex_wait_queue)", the key identical threads are merged by.
std::string thread_line(pid_t pid, const std::string& tid, int* blocked) {
  const std::string base = fmt::format("/proc/{}/task/{}/", pid, tid);
  char st = '?';
  pid_t pp = 0;
  stat_fields(slurp(base + "stat"), &st, &pp);
  std::string where;
  const std::string sc = trim(slurp(base + "syscall"));
  if (sc == "running") where = "on a CPU";
  else if (!sc.empty()) {
    try {
      const long nr = std::stol(sc.substr(0, sc.find(' ')));
      where = nr < 0 ? "in user space" : "in " + syscall_name(nr);
    } catch (const std::exception&) {
    }
  }
  const std::string wchan = trim(slurp(base + "wchan"));
  if (has_signal(status_field(slurp(base + "status"), "SigBlk"), kStackSignal)) ++*blocked;
  std::string line = fmt::format("{} {}", st, where.empty() ? "(syscall unreadable)" : where);
  if (!wchan.empty() && wchan != "0") line += fmt::format(" (wchan {})", wchan);
  return line;
}

void describe(pid_t pid, int depth, const std::map<pid_t, std::vector<pid_t>>& kids, const std::set<pid_t>& forked,
              int max_procs, int* shown, std::string* out) {
  if (++*shown > max_procs) return;
  const std::string status = slurp(fmt::format("/proc/{}/status", pid));
  if (status.empty()) return;
  const std::string pad(2 * depth, ' ');
  const std::string st = status_field(status, "State");
  const char s = st.empty() ? '?' : st[0];
  const std::string sig = has_signal(status_field(status, "SigIgn"), kStackSignal)   ? "SIGUSR1 ignored"
                          : has_signal(status_field(status, "SigCgt"), kStackSignal) ? "SIGUSR1 caught"
                                                                                      : "SIGUSR1 default (would kill it)";
  std::map<std::string, int> threads;  // merged by line, in order of first sight below
  std::vector<std::string> order;
  int blocked = 0, n = 0;
  for (auto& tid : entries(fmt::format("/proc/{}/task", pid))) {
    const std::string l = thread_line(pid, tid, &blocked);
    if (threads[l]++ == 0) order.push_back(l);
    ++n;
  }
  *out += fmt::format("{}pid {} `{}`{}: {} ({}), {}{}, {} thread{}\n", pad, pid, command_line(pid),
                      forked.count(pid) ? " (its subject host, forked by the campaign's zygote)" : "", s, state_words(s),
                      sig, blocked ? fmt::format(" (blocked in {} of them)", blocked) : "", n, n == 1 ? "" : "s");
  for (auto& l : order) *out += fmt::format("{}  {}x {}\n", pad, threads[l], l);
  if (auto it = kids.find(pid); it != kids.end())
    for (pid_t k : it->second) describe(k, depth + 1, kids, forked, max_procs, shown, out);
}

}  // namespace

std::string syscall_name(long nr) {
#if defined(__x86_64__)
  static const std::map<long, const char*> names{
      {0, "read"},          {1, "write"},         {7, "poll"},       {16, "ioctl"},        {23, "select"},
      {34, "pause"},        {35, "nanosleep"},    {45, "recvfrom"},  {47, "recvmsg"},      {61, "wait4"},
      {202, "futex"},       {228, "clock_gettime"}, {230, "clock_nanosleep"}, {232, "epoll_wait"}, {247, "waitid"},
      {270, "pselect6"},    {271, "ppoll"},       {281, "epoll_pwait"}, {441, "epoll_pwait2"}, {9, "mmap"},
      {11, "munmap"},       {3, "close"},         {257, "openat"},   {4, "stat"},          {262, "newfstatat"},
      {130, "rt_sigsuspend"}, {128, "rt_sigtimedwait"}, {24, "sched_yield"}, {42, "connect"}, {43, "accept"},
      {288, "accept4"},     {73, "flock"},        {74, "fsync"}};
#elif defined(__aarch64__)
  static const std::map<long, const char*> names{
      {63, "read"},   {64, "write"},  {29, "ioctl"},  {72, "pselect6"}, {73, "ppoll"},   {98, "futex"},
      {101, "nanosleep"}, {115, "clock_nanosleep"}, {260, "wait4"}, {95, "waitid"}, {22, "epoll_pwait"},
      {207, "recvfrom"}, {212, "recvmsg"}, {222, "mmap"}, {215, "munmap"}, {57, "close"}, {56, "openat"},
      {133, "rt_sigsuspend"}, {137, "rt_sigtimedwait"}, {124, "sched_yield"}, {203, "connect"}, {202, "accept"},
      {242, "accept4"}, {32, "flock"}, {82, "fsync"}};
#else
  static const std::map<long, const char*> names;
#endif
  auto it = names.find(nr);
  return it == names.end() ? fmt::format("syscall #{}", nr) : it->second;
}

std::string process_tree_report(pid_t pid, int max_procs, const std::map<pid_t, pid_t>& adopted) {
  if (pid <= 0) return "";
  std::map<pid_t, std::vector<pid_t>> kids;
  for (auto& p : entries("/proc")) {
    char st = '?';
    pid_t pp = 0;
    if (stat_fields(slurp("/proc/" + p + "/stat"), &st, &pp)) kids[pp].push_back(static_cast<pid_t>(std::stol(p)));
  }
  std::set<pid_t> forked;
  for (auto& [parent, child] : adopted)
    if (child > 0 && std::find(kids[parent].begin(), kids[parent].end(), child) == kids[parent].end()) {
      kids[parent].push_back(child);
      forked.insert(child);
    }
  std::string out;
  int shown = 0;
  describe(pid, 0, kids, forked, max_procs, &shown, &out);
  if (shown > max_procs) out += fmt::format("({} more processes not shown)\n", shown - max_procs);
  return out;
}

std::string adopted_host_file(const std::string& stacks_path) { return stacks_path + ".host"; }

pid_t adopted_host(const std::string& stacks_path) {
  const std::string text = trim(slurp(adopted_host_file(stacks_path)));
  try {
    const pid_t pid = text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
    return pid > 0 && ::kill(pid, 0) == 0 ? pid : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace flce
