// A child's last reply survives its exit (process/process.hpp). On the H200 a campaign worker
// wrote a poisoned case's report and exited 0 between the campaign's read and its exit check;
// the reap closed the pipe with the reply unread, and the case was filed as crash:exit-0.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "process/process.hpp"

namespace flce {
namespace {

ProcessSpec shell(const std::string& script) {
  ProcessSpec s;
  s.exe = "/bin/sh";
  s.args = {"-c", script};
  s.log_path = "/dev/null";
  return s;
}

std::string wait_exit_polling(Process& p) {
  for (int i = 0; i < 200; ++i) {
    std::string how = p.poll_exit();
    if (!how.empty()) return how;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return p.kill();
}

TEST(Process, ALastReplyWrittenBeforeExitIsReadAfterTheReap) {
  Process p;
  // 20,000 bytes: more than one read's worth is not needed, only that nobody read it in time.
  p.spawn(shell("printf '{\"key\":\"k\",\"outcome\":\"'; head -c 20000 /dev/zero | tr '\\\\0' x; printf '\"}\\n'; exit 0"));
  EXPECT_EQ(wait_exit_polling(p), "exit-0");
  EXPECT_FALSE(p.alive());
  std::vector<std::string> lines;
  EXPECT_FALSE(p.read_lines(lines));  // closed now...
  ASSERT_EQ(lines.size(), 1u);        // ...yet the reply it wrote is there, once
  EXPECT_EQ(lines[0].size(), 20000u + 24u);  // {"key":"k","outcome":" and "}
  EXPECT_EQ(lines[0].rfind("{\"key\":\"k\"", 0), 0u);
  lines.clear();
  EXPECT_FALSE(p.read_lines(lines));
  EXPECT_TRUE(lines.empty());
}

TEST(Process, APartialLastLineIsNotInventedAsAReply) {
  Process p;
  p.spawn(shell("printf 'no newline'; exit 3"));
  EXPECT_EQ(wait_exit_polling(p), "exit-3");
  std::vector<std::string> lines;
  EXPECT_FALSE(p.read_lines(lines));
  EXPECT_TRUE(lines.empty());
}

}  // namespace
}  // namespace flce
