// The kernel's view of a hung process and its descendants (/proc), for when Python cannot
// answer the stack signal: per process its state and what SIGUSR1 would do there (caught,
// blocked, ignored); per thread the state, the system call it sits in and its wait channel.
// It separates "stuck in a GPU ioctl" (D), "waiting for a child" (wait4: the child is listed
// with its command line), "spinning in C" (R) and "the handler is gone" (SIGUSR1 default).
#pragma once
#include <sys/types.h>

#include <map>
#include <string>

namespace flce {

// "" when /proc/<pid> is gone. At most `max_procs` processes, identical threads merged.
// `adopted`: parent -> a child another process forked for it (a subject host from the
// campaign's zygote, process/zygote.hpp), shown under that parent and marked so.
std::string process_tree_report(pid_t pid, int max_procs = 16, const std::map<pid_t, pid_t>& adopted = {});

// Where a worker notes the pid of its subject host when the zygote forked it: next to the
// slot's stacks file, so the campaign's report of a hung worker can show that host.
std::string adopted_host_file(const std::string& stacks_path);
// That pid, if the file names a live process; 0 otherwise.
pid_t adopted_host(const std::string& stacks_path);

// x86-64 / aarch64 names of the calls a hung thread sits in ("futex", "wait4"); "#N" else.
std::string syscall_name(long nr);

}  // namespace flce
