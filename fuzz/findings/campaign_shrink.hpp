// The campaign's last step: each new finding's first case is shrunk with minimize() (the
// outcome line must stay identical; a candidate that fails differently is rejected),
// every try run by an `flce worker` of the finding's lane (an eager-lane finding is shrunk
// without torch.compile; one worker per finding being shrunk, up to `parallel` at once; same
// isolation as exploration: a try that crashes or hangs costs that try, and the next try gets
// a fresh worker), and written next to the finding as minimized.json plus a standalone
// repro.py (`flce repro --emit-python`'s script, expecting that exact outcome). Findings
// already shrunk, and known ones (known.hpp), are skipped, so a resumed campaign continues here.
// With check_alone, each repro.py is then run alone as a maintainer would (script_check.hpp):
// the finding's repro_alone and repro.check.json say whether it printed the finding.
#pragma once
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/findings/finding.hpp"
#include "fuzz/findings/worker_client.hpp"

namespace flce {

struct ShrinkOptions {
  WorkerLaunch worker;          // subject, paths, limits; log_path and gpu are set per shrink worker
  double per_finding_s = 60;   // minimize()'s budget per finding
  double case_timeout_s = 600;  // one try; past it the worker is killed ("timeout@stage")
  std::vector<std::string> gpus;  // CUDA_VISIBLE_DEVICES of shrink worker k: gpus[k % size]; none: inherit
  int parallel = 1;                // findings shrunk at once, one worker each
  bool check_alone = false;        // run each repro.py written here alone (script_check.hpp)
  bool quiet = false;
  volatile std::sig_atomic_t* stop = nullptr;  // set by SIGINT/SIGTERM: finish the current try, stop
  // When the shrink phase must be over (the campaign's --grace-s); the CUDA-fault re-run of a
  // finding gets no more than what is left. Unset: no limit but case_timeout_s.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

// Updates each finding's shrink fields and calls save() after each finding. Never throws
// for a shrink that fails (the finding keeps "skipped: <why>"): the reports still follow.
void shrink_findings(const std::filesystem::path& dir, std::vector<Finding>& findings, const ShrinkOptions& o,
                     const std::function<void()>& save);

}  // namespace flce
