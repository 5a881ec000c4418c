#include "subject_worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace flce {

namespace fs = std::filesystem;

namespace {

// One input tensor as the embedded host builds it (python_host.cpp), written raw.
struct InputFile {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
  const void* data;
  size_t bytes;
  bool int64;
};

std::vector<InputFile> input_files(const Case& c, const Inputs& in, std::vector<Inputs>& extra) {
  std::vector<InputFile> v;
  auto f32 = [&](std::string n, const std::vector<float>& d, std::vector<int64_t> sh, DType dt) {
    v.push_back({std::move(n), std::move(sh), dt, d.data(), d.size() * sizeof(float), false});
  };
  if (c.is_op()) {
    auto sh = [&](int64_t a, int64_t b) {
      return c.batched() ? std::vector<int64_t>{c.batch, a, b} : std::vector<int64_t>{a, b};
    };
    f32("a", in.op_a, sh(c.V, c.BT), c.input_dtype);
    f32("b", in.x, sh(c.BT, c.H), c.input_dtype);
    if (c.has_accumulator()) f32("c", in.op_c, sh(c.V, c.H), c.op_out_dtype());
    return v;
  }
  auto per_bt = [&](const Inputs& inp, const std::string& sfx) {
    f32("x" + sfx, inp.x, {inp.BT, c.H}, c.input_dtype);
    v.push_back({"target" + sfx, {inp.BT}, DType::I64, inp.target.data(), inp.target.size() * sizeof(int64_t), true});
    f32("token_grad" + sfx, inp.token_grad, {inp.BT}, DType::F32);
  };
  per_bt(in, "");
  extra.reserve(c.extra_BT.size());  // InputFile points into these: no reallocation
  for (int64_t bt : c.extra_BT) {
    extra.push_back(make_inputs(c, bt));
    per_bt(extra.back(), "@" + std::to_string(bt));
  }
  f32("w", in.w, {c.V, c.H}, c.weight_dtype);
  if (c.bias) f32("bias", in.bias, {c.V}, c.weight_dtype);
  if (c.ce_weight) f32("ce_weight", in.ce_weight, {c.V}, DType::F32);
  return v;
}

void write_file(const std::string& path, const void* data, size_t bytes) {
  std::ofstream o(path, std::ios::binary);
  o.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!o) throw std::runtime_error("cannot write " + path);
}

Tensor64 read_output(const nlohmann::json& spec) {
  Tensor64 t;
  t.shape = spec.at("shape").get<std::vector<int64_t>>();
  t.dtype = parse_dtype(spec.at("dtype").get<std::string>()).value_or(DType::I64);
  const std::string path = spec.at("file").get<std::string>();
  std::ifstream f(path, std::ios::binary);
  t.data.resize(static_cast<size_t>(t.numel()));
  f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * sizeof(double)));
  if (!f) throw std::runtime_error("short output file " + path);
  fs::remove(path);
  return t;
}

std::string str_or(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

// Stable text (it feeds the signature bucket id): no pids, paths or stderr.
std::string exit_text(int status) {
  if (WIFSIGNALED(status)) {
    // A table, not sigabbrev_np: that needs glibc 2.32, and the GPU box builds this too.
    switch (WTERMSIG(status)) {
      case SIGSEGV: return "killed by SIGSEGV";
      case SIGABRT: return "killed by SIGABRT";
      case SIGBUS: return "killed by SIGBUS";
      case SIGFPE: return "killed by SIGFPE";
      case SIGILL: return "killed by SIGILL";
      case SIGKILL: return "killed by SIGKILL";
      case SIGTERM: return "killed by SIGTERM";
      default: return fmt::format("killed by signal {}", WTERMSIG(status));
    }
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

// The campaign's short form of the same: "SIGSEGV", "exit-3".
std::string exit_short(int status) {
  const std::string t = exit_text(status);
  if (t.rfind("killed by ", 0) == 0) return t.substr(10);
  if (WIFEXITED(status)) return fmt::format("exit-{}", WEXITSTATUS(status));
  return "ended";
}

SubjectResult worker_failure(const std::string& type, const std::string& why) {
  SubjectResult r;
  r.status = SubjectStatus::ERROR;
  r.phase = "worker";
  r.chain = {ErrorLink{type, why, {}}};
  return r;
}

}  // namespace

SubjectWorker::SubjectWorker(WorkerOptions opt) : opt_(std::move(opt)) {
  if (opt_.python.empty()) opt_.python = FLCE_PYTHON_EXECUTABLE;
  if (opt_.subjects_dir.empty()) opt_.subjects_dir = FLCE_SUBJECTS_DIR;
  std::string tmpl = (fs::temp_directory_path() / "flce-worker-XXXXXX").string();  // honours TMPDIR
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory for the worker");
  dir_ = tmpl;
  log_path_ = dir_ + "/stderr.log";
  try {
    start();
    environment();  // throws, with the worker's stderr tail, when torch or the runner cannot load
  } catch (...) {
    stop(true);  // no destructor runs for a half-built object
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

SubjectWorker::~SubjectWorker() {
  stop(false);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void SubjectWorker::start() {
  if (access(opt_.python.c_str(), X_OK) != 0)
    throw std::runtime_error(fmt::format("no Python interpreter at {}", opt_.python));
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker is seen on read, not as a signal on write
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  // Everything prepared before spawning: the gate spawns from several threads.
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "PYTHONPATH=", 11) != 0 && strncmp(*e, "PYTHONHOME=", 11) != 0) env_store.emplace_back(*e);
  const char* pp = getenv("PYTHONPATH");
  env_store.push_back("PYTHONPATH=" + opt_.subjects_dir + (pp && *pp ? std::string(":") + pp : ""));
  env_store.push_back("PYTHONUNBUFFERED=1");
  env_store.push_back("PYTHONFAULTHANDLER=1");  // a crash leaves its Python stack in the log
  // Inductor's compile pool costs more to start than it saves on flce's small graphs, and
  // the gate already runs two workers side by side (measured: 80 s vs 93 s, cold cache).
  if (!getenv("TORCHINDUCTOR_COMPILE_THREADS")) env_store.push_back("TORCHINDUCTOR_COMPILE_THREADS=1");
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string m = "-m", mod = "flce_subjects.subprocess_worker";
  std::vector<char*> argv{opt_.python.data(), m.data(), mod.data(), nullptr};

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  // Its own process group: a kill also reaches Inductor's compile workers.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  int rc = posix_spawn(&pid_, opt_.python.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(log_fd);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    pid_ = -1;
    throw std::runtime_error(fmt::format("cannot start {}: {}", opt_.python, strerror(rc)));
  }
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  pending_.clear();
}

void SubjectWorker::stop(bool kill) {
  if (pid_ <= 0) return;
  if (to_child_ >= 0) close(to_child_);  // EOF on stdin: the worker's loop ends
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  int status = 0;
  if (kill) ::kill(-pid_, SIGKILL);
  // Give a clean exit a moment, then insist.
  bool reaped = false;
  for (int i = 0; i < 50 && !reaped; ++i) {
    reaped = waitpid(pid_, &status, WNOHANG) == pid_;
    if (!reaped) usleep(100000);
  }
  if (!reaped) {
    ::kill(-pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

std::string SubjectWorker::log_tail() const {
  std::ifstream f(log_path_);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

std::optional<nlohmann::json> SubjectWorker::request(const nlohmann::json& req, std::string* why) {
  if (pid_ <= 0) start();
  std::string line = req.dump() + "\n";
  for (size_t off = 0; off < line.size();) {
    ssize_t n = write(to_child_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // died: the read below says how
    off += static_cast<size_t>(n);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt_.timeout_s);
  char buf[65536];
  for (;;) {
    if (auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string reply = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      try {
        return nlohmann::json::parse(reply);
      } catch (const std::exception& e) {
        *why = fmt::format("unreadable reply from the worker ({}): {}", e.what(), reply.substr(0, 200));
        stop(true);
        return std::nullopt;
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop(true);
      *why = fmt::format("no reply within {:g} s (worker killed)", opt_.timeout_s);
      return std::nullopt;
    }
    pollfd p{from_child_, POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t n = read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int status = 0;
      close(to_child_);
      close(from_child_);
      to_child_ = from_child_ = -1;
      waitpid(pid_, &status, 0);
      ::kill(-pid_, SIGKILL);  // orphaned compile workers of the dead process
      pid_ = -1;
      *why = "worker " + exit_text(status);
      died_ = exit_short(status);
      // The tail goes to our stderr, not into the error chain (it would unsettle bucket ids).
      std::string tail = log_tail();
      std::fprintf(stderr, "flce: worker %s (%s) %s%s%s\n", opt_.label.c_str(), opt_.python.c_str(),
                   exit_text(status).c_str(), tail.empty() ? "" : "; its stderr ends with:\n", tail.c_str());
      std::ofstream(log_path_, std::ios::trunc);  // the next crash shows only its own tail
      return std::nullopt;
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
}

SubjectResult SubjectWorker::run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                                 const std::optional<Backend>& backend, const std::string& subject_path) {
  const uint64_t id = ++seq_;
  std::vector<Inputs> extra;
  nlohmann::json inputs = nlohmann::json::object();
  std::vector<std::string> written;
  for (auto& f : input_files(c, in, extra)) {
    std::string path = fmt::format("{}/{}-{}.in", dir_, id, f.name);
    write_file(path, f.data, f.bytes);
    written.push_back(path);
    inputs[f.name] = {{"file", path}, {"shape", f.shape}, {"dtype", std::string(dtype_name(f.dtype))},
                      {"storage", f.int64 ? "i64" : "f32"}};
  }
  nlohmann::json req{{"op", "run"},
                     {"id", id},
                     {"case", nlohmann::json::parse(to_json(c, -1))},
                     {"inputs", inputs},
                     {"subject", subject},
                     {"mode", mode},
                     {"backend", backend ? nlohmann::json(std::string(name(*backend))) : nlohmann::json()},
                     {"subject_path", subject_path.empty() ? nlohmann::json() : nlohmann::json(subject_path)},
                     {"out_dir", dir_}};
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<nlohmann::json> res;
  died_.clear();
  try {
    res = request(req, &why);
  } catch (const std::exception& e) {  // a restart after a crash failed
    why = e.what();
  }
  for (auto& p : written) fs::remove(p);
  if (!res) {
    SubjectResult r = worker_failure(why.find("no reply within") == 0 ? "flce.WorkerTimeout" : "flce.WorkerCrash", why);
    r.died = std::exchange(died_, "");
    r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  SubjectResult r;
  const std::string status = str_or(*res, "status");
  r.status = status == "ok" ? SubjectStatus::OK : status == "unsupported" ? SubjectStatus::UNSUPPORTED : SubjectStatus::ERROR;
  r.reason = str_or(*res, "reason");
  r.subject_version = str_or(*res, "subject_version");
  if (res->contains("wall_ms") && (*res)["wall_ms"].is_number()) r.wall_ms = (*res)["wall_ms"].get<double>();
  if (res->contains("paths") && (*res)["paths"].is_array())
    for (auto& p : (*res)["paths"]) r.paths.push_back(p.get<std::string>());
  if (res->contains("outputs") && (*res)["outputs"].is_object())
    for (auto& [k, spec] : (*res)["outputs"].items()) r.outputs[k] = read_output(spec);
  if (res->contains("error") && (*res)["error"].is_object()) {
    auto& err = (*res)["error"];
    r.phase = str_or(err, "phase");
    if (err.contains("chain"))
      for (auto& l : err["chain"]) {
        ErrorLink el{str_or(l, "type"), str_or(l, "message"), {}};
        if (l.contains("frames"))
          for (auto& f : l["frames"]) el.frames.push_back(f.get<std::string>());
        r.chain.push_back(std::move(el));
      }
  }
  return r;
}

Environment SubjectWorker::environment() {
  if (env_) return *env_;
  std::string why;
  auto j = request({{"op", "environment"}}, &why);
  if (!j) {
    std::string tail = log_tail();
    throw std::runtime_error(fmt::format("worker {} ({}) cannot start: {}{}", opt_.label, opt_.python, why,
                                         tail.empty() ? "" : "; its stderr ends with:\n" + tail));
  }
  Environment e;
  e.python = str_or(*j, "python");
  e.torch = str_or(*j, "torch");
  e.triton = str_or(*j, "triton");
  e.cuda = str_or(*j, "cuda");
  e.gpu = str_or(*j, "gpu");
  e.capability = str_or(*j, "capability");
  e.platform = str_or(*j, "platform");
  e.liger = str_or(*j, "liger");
  env_ = e;
  return e;
}

std::string SubjectWorker::torch_version() { return environment().torch; }

SubjectInfo SubjectWorker::describe(const std::string& subject, const std::string& subject_path) {
  SubjectInfo info;
  std::string why;
  auto j = request({{"op", "describe"},
                    {"subject", subject},
                    {"subject_path", subject_path.empty() ? nlohmann::json() : nlohmann::json(subject_path)}},
                   &why);
  if (!j) {
    info.error = why;
    return info;
  }
  info.error = str_or(*j, "error");
  info.flce = j->value("flce", false);
  info.op = j->value("op", false);
  info.version = str_or(*j, "version");
  return info;
}

void SubjectWorker::reset() {
  std::string why;
  request({{"op", "reset"}}, &why);
}

}  // namespace flce
