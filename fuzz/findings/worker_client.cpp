#include "fuzz/findings/worker_client.hpp"

#include "oracles/subject_worker.hpp"
#include "process/bytecode_cache.hpp"
#include "process/zygote.hpp"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace flce {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kStartupTimeoutS = 300;  // Python + torch import on a loaded machine

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

std::vector<std::string> visible_gpus() {
  std::vector<std::string> ids;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream ss(v);
    for (std::string id; std::getline(ss, id, ',');)
      if (!id.empty() && id != "-1") ids.push_back(id);
      else if (id == "-1") break;  // CUDA's "nothing from here on"
    return ids;
  }
  std::error_code ec;
  int n = 0;
  for (auto it = fs::directory_iterator("/proc/driver/nvidia/gpus", ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    ++n;
  for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
  return ids;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string triton_box_dir() {
  if (const char* v = std::getenv("FLCE_TRITON_BOX_CACHE"); v && *v) return std::string(v) == "off" ? "" : v;
  return box_cache_dir("triton");
}

ProcessSpec worker_spec(const WorkerLaunch& l) {
  ProcessSpec w;
  w.exe = l.exe;
  w.args = {"worker", "--subject", l.subject, "--mem-gib", fmt::format("{}", l.mem_gib)};
  if (!l.subject_path.empty()) w.args.insert(w.args.end(), {"--subject-path", l.subject_path});
  if (!l.baseline.empty()) {
    w.args.insert(w.args.end(), {"--baseline", l.baseline});
    if (!l.baseline_path.empty()) w.args.insert(w.args.end(), {"--baseline-path", l.baseline_path});
  }
  // Python tracebacks on SIGSEGV land in the worker log.
  w.env = {"PYTHONFAULTHANDLER=1"};
  if (!l.gpu.empty()) w.env.push_back("CUDA_VISIBLE_DEVICES=" + l.gpu);  // one GPU per worker
  if (!std::getenv("TORCHINDUCTOR_CACHE_DIR")) {
    // One campaign, one cache: a configuration compiled by one worker is a cache hit for the
    // next (Inductor and Triton write their entries by rename). Without one, a cache per slot.
    const fs::path log(l.log_path);
    w.env.push_back("TORCHINDUCTOR_CACHE_DIR=" + (l.cache_dir.empty()
                                                      ? (log.parent_path() / log.stem()).string() + "-inductor"
                                                      : (fs::path(l.cache_dir) / "inductor").string()));
  }
  if (!l.cache_dir.empty() && !std::getenv("TRITON_CACHE_DIR")) {
    w.env.push_back("TRITON_CACHE_DIR=" + (fs::path(l.cache_dir) / "triton").string());
    if (!l.triton_box.empty() && !std::getenv("TRITON_CACHE_MANAGER")) {
      w.env.push_back("TRITON_CACHE_MANAGER=flce_subjects.triton_box_cache:BoxCacheManager");
      w.env.push_back("FLCE_TRITON_BOX_CACHE=" + l.triton_box);
    }
  }
  const int threads = std::max(1, l.threads);
  if (!std::getenv("OMP_NUM_THREADS")) w.env.push_back(fmt::format("OMP_NUM_THREADS={}", threads));
  // Inductor sizes its compile pool from the machine's cores, not the worker's share of them:
  // ten campaigns of two workers on 16 cores would start 320 compile processes.
  if (!std::getenv("TORCHINDUCTOR_COMPILE_THREADS"))
    w.env.push_back(fmt::format("TORCHINDUCTOR_COMPILE_THREADS={}", threads));
  if (!l.zygote.empty()) w.env.push_back(std::string(kZygoteEnv) + "=" + l.zygote);
  w.log_path = l.log_path;
  w.on_reaped = remove_worker_scratch;  // a killed worker's scratch folder and shared memory
  return w;
}

ProcessSpec zygote_spec(const WorkerLaunch& l, const std::string& socket_path, const std::string& stacks_path) {
  WorkerLaunch plain = l;
  plain.zygote.clear();
  plain.gpu.clear();  // a host's own GPU is read at its first CUDA call, after the fork
  const ProcessSpec worker = worker_spec(plain);
  // The worker's environment, staged as the host would inherit it: subject_host_spec reads it.
  std::map<std::string, std::string> staged;
  for (auto& kv : merged_environment(worker.env, worker.unset)) staged[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  ProcessSpec z = subject_host_spec("", "", stacks_path, [&](const char* k) -> const char* {
    auto it = staged.find(k);
    return it == staged.end() ? nullptr : it->second.c_str();
  });
  z.env.insert(z.env.begin(), worker.env.begin(), worker.env.end());  // the host's own entries win
  z.args = {"-m", "flce_subjects.zygote", socket_path, l.subject, l.subject_path};
  z.log_path = l.log_path;
  return z;
}

WorkerClient::WorkerClient(WorkerLaunch launch, double case_timeout_s, volatile std::sig_atomic_t* stop)
    : launch_(std::move(launch)), case_timeout_s_(case_timeout_s), stop_(stop) {}

// A worker with no case in flight has nothing to finish: a short grace, then it is killed (a
// campaign ends within --grace-s of its budget, ten of them side by side).
WorkerClient::~WorkerClient() {
  if (proc_ && proc_->alive()) proc_->stop(2.0);
}

void WorkerClient::restart() {
  if (proc_ && proc_->alive()) proc_->stop(2.0);
  proc_.reset();
  pending_.clear();
}

WorkerReply WorkerClient::run_case(const nlohmann::json& case_json, const std::string& lane) {
  return ask({{"case", case_json}, {"lane", lane}});
}

WorkerReply WorkerClient::probe_case(const nlohmann::json& case_json, const std::string& lane) {
  return ask({{"case", case_json}, {"lane", lane}, {"ladder", false}});
}

WorkerReply WorkerClient::run_sequence(const nlohmann::json& sequence_json, const std::string& lane) {
  return ask({{"sequence", sequence_json}, {"lane", lane}});
}

WorkerReply WorkerClient::ask(nlohmann::json req) {
  if (!proc_ || !proc_->alive()) start();
  const std::string key = fmt::format("client-{}", ++n_);
  req["key"] = key;
  proc_->send(req.dump() + "\n");
  std::string stage = "queued";
  const auto t0 = Clock::now();
  for (;;) {
    nlohmann::json j;
    std::string how;
    const double left = case_timeout_s_ - since(t0);
    if (left <= 0) {
      proc_->kill();
      return {"timeout@" + stage, nullptr, nullptr, ""};
    }
    if (!next_line(left, &j, &how)) return {fmt::format("crash:{}@{}", how, stage), nullptr, nullptr, ""};
    if (j.is_null() || j.value("key", "") != key) continue;
    if (j.contains("stage")) {
      stage = j["stage"].get<std::string>();
    } else if (j.value("bad_input", false)) {
      throw std::runtime_error("worker refused the case: " + j.value("why", ""));
    } else if (j.contains("outcome")) {
      WorkerReply r{j["outcome"].get<std::string>(), j.value("report", nlohmann::json()),
                    j.value("baseline_report", nlohmann::json()), j.value("baseline_outcome", "")};
      // A worker that reported a poisoned context or a dead subject exits: the next try starts one.
      if (j.value("cuda_poisoned", false) || j.value("subject_died", false)) restart();
      return r;
    }
  }
}

void WorkerClient::start() {
  proc_ = std::make_unique<Process>();
  proc_->spawn(worker_spec(launch_));
  pending_.clear();
  const auto t0 = Clock::now();
  for (;;) {
    nlohmann::json j;
    std::string how;
    const double left = kStartupTimeoutS - since(t0);
    if (left <= 0 || !next_line(left, &j, &how))
      throw std::runtime_error(
          fmt::format("worker did not start ({}); see {}", how.empty() ? "timeout" : how, launch_.log_path));
    if (j.is_object() && j.contains("ready")) {
      if (!j["ready"].get<bool>()) throw std::runtime_error("worker refused: " + j.value("why", ""));
      return;
    }
  }
}

bool WorkerClient::next_line(double timeout_s, nlohmann::json* out, std::string* how) {
  const auto t0 = Clock::now();
  while (pending_.empty()) {
    const double left = timeout_s - since(t0);
    if (left <= 0) {
      *out = nullptr;
      return true;  // the caller re-checks its own deadline
    }
    pollfd pf{proc_->out_fd(), POLLIN, 0};
    ::poll(&pf, 1, static_cast<int>(std::min(left, 0.5) * 1000) + 1);
    std::vector<std::string> lines;
    const bool open = proc_->read_lines(lines);
    for (auto& l : lines) pending_.push_back(l);
    if (pending_.empty()) {
      std::string ended = open ? proc_->poll_exit() : proc_->stop(5.0);
      if (!ended.empty()) {
        proc_->read_lines(lines);  // what it wrote just before its exit comes first
        for (auto& l : lines) pending_.push_back(l);
        if (!pending_.empty()) break;
        *how = ended;
        return false;
      }
    }
    if (stop_ && *stop_) {
      *how = proc_->kill();
      return false;
    }
  }
  *out = nlohmann::json::parse(pending_.front(), nullptr, false);
  pending_.erase(pending_.begin());
  if (out->is_discarded()) *out = nullptr;
  return true;
}

}  // namespace flce
