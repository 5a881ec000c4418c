// A campaign's subject-host zygote (subjects/flce_subjects/zygote.py): one Python that imported
// torch and the subject once forks each subject host of the campaign, so a worker, an analysis
// or a walk starts in a moment where a spawned host imports for 6-18 s on the H200.
// The host is the zygote's child, adopted here (Process::adopt): its own process group, its
// stdin/stdout pipes and stderr log passed over the socket (SCM_RIGHTS), its exit reported.
#pragma once
#include <string>

#include "process/process.hpp"

namespace flce {

// The zygote's socket, in a campaign worker's environment: its subject host asks there first.
inline constexpr const char* kZygoteEnv = "FLCE_SUBJECT_ZYGOTE";

// Starts `spec` (a subject host: its interpreter, `-m flce_subjects.subprocess_worker`, its
// environment) as a child of the zygote at `socket_path`, adopted by `p`. false, with *why, when
// the zygote refuses it (another interpreter, an environment that differs where an import reads
// it, a preload that failed or left CUDA unusable in a fork) or gives no answer within wait_s
// (it is still importing past that): the caller spawns the host itself.
bool spawn_through_zygote(Process& p, const ProcessSpec& spec, const std::string& socket_path, double wait_s,
                          std::string* why);

// A socket path for a new zygote (a fresh temporary folder: AF_UNIX paths are short); "" if none.
std::string new_zygote_socket_path();

}  // namespace flce
