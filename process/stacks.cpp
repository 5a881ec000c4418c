#include "process/stacks.hpp"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace flce {

namespace {

std::atomic<pid_t> g_forward{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read in a signal handler");

void forward(int) {
  const pid_t p = g_forward.load();
  if (p > 0) ::kill(p, kStackSignal);
}

off_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

const char* owner(const std::string& frame) {
  if (frame.find("/flce_subjects/") != std::string::npos) return "[flce]   ";
  for (const char* t : {"/torch/", "/triton/", "/functorch/"})
    if (frame.find(t) != std::string::npos) return "[torch]  ";
  if (frame.find("/site-packages/") == std::string::npos && frame.find("/dist-packages/") == std::string::npos &&
      (frame.find("/lib/python3") != std::string::npos || frame.find("File \"<frozen") != std::string::npos))
    return "[python] ";
  return "[subject]";
}

}  // namespace

std::string request_stacks(pid_t pid, const std::string& path, double wait_s) {
  if (pid <= 0 || path.empty()) return "";
  const off_t before = size_of(path);
  if (::kill(pid, kStackSignal) != 0) return "";
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  off_t seen = before;
  auto still_since = Clock::now();
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const off_t now = size_of(path);
    if (now != seen) {
      seen = now;
      still_since = Clock::now();
    } else if (seen > before && Clock::now() - still_since >= std::chrono::milliseconds(200)) {
      break;  // faulthandler writes its dump in one go: still for 200 ms means done
    }
  }
  if (seen <= before) return "";
  std::ifstream in(path, std::ios::binary);
  in.seekg(before);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string stacks_report(const std::string& flce_side, const std::string& stacks, const std::string& tree) {
  std::string out = "flce: " + flce_side + "\n\n";
  const std::string kernel =
      tree.empty() ? ""
                   : "\nThe kernel's view (/proc) of the hung process and its children: state, what SIGUSR1 does there, "
                     "and per thread the system call it sits in (identical threads merged):\n\n" + tree;
  if (stacks.empty())
    return out + "No Python stacks: the subject host did not answer " + std::to_string(kStackSignal) +
           " (SIGUSR1) within the wait (not started yet, or stuck where Python cannot run its signal handler: "
           "see the kernel's view).\n" + kernel;
  out += "Python stacks of the subject host, every thread (faulthandler; most recent call first). Tags: [flce] "
         "flce's subject host, [torch] torch/triton, [python] the standard library, [subject] the subject's code.\n\n";
  std::istringstream in(stacks);
  for (std::string line; std::getline(in, line);)
    out += (line.rfind("  File \"", 0) == 0 ? std::string(owner(line)) + line : line) + "\n";
  return out + kernel;
}

void set_stack_forward_target(pid_t pid) { g_forward.store(pid); }

void forward_stack_requests() {
  struct sigaction sa {};
  sa.sa_handler = forward;
  sa.sa_flags = SA_RESTART;  // the worker's blocking reads go on
  ::sigaction(kStackSignal, &sa, nullptr);
}

}  // namespace flce
