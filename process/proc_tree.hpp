// The kernel's view of a hung process and its descendants (/proc), for when Python cannot
// answer the stack signal: per process its state and what SIGUSR1 would do there (caught,
// blocked, ignored); per thread the state, the system call it sits in and its wait channel.
// It separates "stuck in a GPU ioctl" (D), "waiting for a child" (wait4: the child is listed
// with its command line), "spinning in C" (R) and "the handler is gone" (SIGUSR1 default).
#pragma once
#include <sys/types.h>

#include <string>

namespace flce {

// "" when /proc/<pid> is gone. At most `max_procs` processes, identical threads merged.
std::string process_tree_report(pid_t pid, int max_procs = 16);

// x86-64 / aarch64 names of the calls a hung thread sits in ("futex", "wait4"); "#N" else.
std::string syscall_name(long nr);

}  // namespace flce
