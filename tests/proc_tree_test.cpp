// The kernel's view of a hung process tree (process/proc_tree.hpp): what a timeout's stacks.txt
// says when Python cannot answer. A shell that ignores SIGUSR1 and waits for a sleeping child
// stands in for a subject host waiting on a hung compiler subprocess.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "process/proc_tree.hpp"
#include "process/stacks.hpp"

extern char** environ;

namespace flce {
namespace {

struct Child {
  pid_t pid = -1;
  explicit Child(const char* script) {
    const char* argv[] = {"/bin/sh", "-c", script, nullptr};
    posix_spawnattr_t a;
    ::posix_spawnattr_init(&a);
    ::posix_spawnattr_setflags(&a, POSIX_SPAWN_SETPGROUP);  // its own group: the kill below ends the sleep too
    ::posix_spawnattr_setpgroup(&a, 0);
    EXPECT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, &a, const_cast<char**>(argv), environ), 0);
    ::posix_spawnattr_destroy(&a);
  }
  ~Child() {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

// Polls until the tree shows `want` (the child needs a moment to fork and exec).
std::string wait_for(pid_t pid, const std::regex& want) {
  std::string r;
  for (int i = 0; i < 100; ++i) {
    r = process_tree_report(pid);
    if (std::regex_search(r, want)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return r;
}

TEST(ProcTree, NamesTheIgnoredSignalTheWaitAndTheChild) {
  Child sh("trap '' USR1; sleep 30 & wait");
  wait_for(sh.pid, std::regex("in (wait4|waitid|rt_sigsuspend)"));
  const std::string r = wait_for(sh.pid, std::regex("`sleep 30`: S[^]*(clock_nanosleep|nanosleep)"));
  EXPECT_NE(r.find("pid " + std::to_string(sh.pid) + " `/bin/sh -c"), std::string::npos) << r;
  EXPECT_NE(r.find("SIGUSR1 ignored"), std::string::npos) << r;  // why Python would never answer
  EXPECT_TRUE(std::regex_search(r, std::regex("\n  pid [0-9]+ `sleep 30`: S \\(sleeping\\)"))) << r;  // the child, indented
#if defined(__x86_64__) || defined(__aarch64__)
  EXPECT_TRUE(std::regex_search(r, std::regex("1x S in (wait4|waitid|rt_sigsuspend)"))) << r;            // the shell waits for it (dash: sigsuspend)
  EXPECT_TRUE(std::regex_search(r, std::regex("1x S in (clock_nanosleep|nanosleep)"))) << r;
#endif
}

TEST(ProcTree, CaughtAndGoneProcesses) {
  Child sh("trap 'echo' USR1; while :; do sleep 1; done");
  const std::string r = wait_for(sh.pid, std::regex("SIGUSR1 caught"));
  EXPECT_NE(r.find("SIGUSR1 caught"), std::string::npos) << r;
  EXPECT_EQ(process_tree_report(0), "");
  pid_t dead = -1;
  {
    Child gone("exit 0");
    dead = gone.pid;
  }
  EXPECT_EQ(process_tree_report(dead), "");
  EXPECT_EQ(syscall_name(-7), "syscall #-7");
}

TEST(ProcTree, StacksReportWithoutPythonPointsAtTheKernelView) {
  const std::string r = stacks_report("stage eager, case k", "", "pid 7 `python`: D (uninterruptible)\n");
  EXPECT_NE(r.find("No Python stacks"), std::string::npos) << r;
  EXPECT_NE(r.find("see the kernel's view"), std::string::npos) << r;
  EXPECT_NE(r.find("pid 7 `python`: D"), std::string::npos) << r;
}

}  // namespace
}  // namespace flce
