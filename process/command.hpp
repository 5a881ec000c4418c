// A short-lived helper command run to completion (git, tar): posix_spawnp on the PATH, its
// stdout and stderr captured, no shell in between (arguments are never re-parsed). For the
// long-lived children that speak a protocol, see process.hpp.
#pragma once
#include <string>
#include <vector>

namespace flce {

struct CommandResult {
  int status = -1;     // exit status; -1 when it could not start or was killed by a signal
  std::string out;     // its stdout
  std::string err;     // its stderr (or why it could not start)
  bool ok() const { return status == 0; }
  // stdout without its trailing newlines ("git rev-parse" prints one line).
  std::string line() const;
};

// args[0] is looked up on PATH. Never throws for the command's own failure.
CommandResult run_command(const std::vector<std::string>& args);

}  // namespace flce
