// Stacks of a hung child before it is killed. The subject host (subprocess_worker.py) dumps
// every Python thread's stack (faulthandler) into its stacks file on kStackSignal; flce asks
// for them when it gives up on a call or a case, waits briefly, then kills. A campaign's
// `flce worker` forwards the signal to its own subject host (the campaign does not know
// that grandchild's pid).
#pragma once
#include <sys/types.h>

#include <csignal>
#include <string>

namespace flce {

inline constexpr int kStackSignal = SIGUSR1;
// The environment variable naming the file the subject host appends its stacks to.
inline constexpr const char* kStacksFileEnv = "FLCE_STACKS_FILE";

// Sends kStackSignal to `pid` and returns what `path` gained since: once it has grown and then
// been still for a moment, or after `wait_s`. "" when nothing came (the child did not answer).
std::string request_stacks(pid_t pid, const std::string& path, double wait_s = 3.0);

// The stacks file as a report: a header naming flce's side (stage, case, limit), then each
// frame line tagged by whose code it is: [flce] (flce_subjects), [torch] (torch, triton),
// [python] (the standard library), [subject] (everything else: the subject's own code).
// `tree`: process_tree_report (process/proc_tree.hpp) of the hung process, appended: where
// every thread of it and of its children sits from the kernel's side, answered or not.
std::string stacks_report(const std::string& flce_side, const std::string& stacks, const std::string& tree = "");

// In a process that runs a subject host: the pid kStackSignal is forwarded to (the host
// that was started last), and the handler that forwards it (installed once, by `flce worker`).
void set_stack_forward_target(pid_t pid);
void forward_stack_requests();

}  // namespace flce
