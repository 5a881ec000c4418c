#include "oracles/subject_worker.hpp"
#include "process/proc_tree.hpp"
#include "process/stacks.hpp"
#include "process/zygote.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace flce {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// One input tensor as the subject sees it: values exact in `dtype`, stored as fp32 (or int64).
struct InputTensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
  const void* data;
  size_t bytes;
  bool int64;
};

std::vector<InputTensor> input_tensors(const Case& c, const Inputs& in, std::vector<Inputs>& extra) {
  std::vector<InputTensor> v;
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
  extra.reserve(c.extra_BT.size());  // InputTensor points into these: no reallocation
  for (int64_t bt : c.extra_BT) {
    extra.push_back(make_inputs(c, bt));
    per_bt(extra.back(), "@" + std::to_string(bt));
  }
  f32("w", in.w, {c.V, c.H}, c.weight_dtype);
  if (c.bias) f32("bias", in.bias, {c.V}, c.weight_dtype);
  if (c.ce_weight) f32("ce_weight", in.ce_weight, {c.V}, DType::F32);
  return v;
}

constexpr size_t kAlign = 64;
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string str_or(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

// Stable text (it feeds the signature bucket id): no pids, paths or stderr.
std::string exit_text(const std::string& how) {
  if (how.rfind("exit-", 0) == 0) return "exited with status " + how.substr(5);
  return "killed by " + how;
}

SubjectResult worker_failure(const std::string& type, const std::string& why) {
  SubjectResult r;
  r.status = SubjectStatus::ERROR;
  r.phase = "worker";
  r.chain = {ErrorLink{type, why, {}}};
  return r;
}

}  // namespace

std::string default_python() {
  const char* v = std::getenv("FLCE_SUBJECT_PYTHON");
  if (v && *v) return v;
  return FLCE_PYTHON_EXECUTABLE;
}

void remove_worker_scratch(pid_t pid) {
  const auto sweep = [](const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind(prefix, 0) == 0) {
        std::error_code rm;
        fs::remove_all(it->path(), rm);
      }
  };
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (!ec) sweep(tmp, fmt::format("flce-worker-{}-", pid));
  sweep(shared_memory_dir(), fmt::format("flce-{}-", pid));
}

SubjectWorker::SubjectWorker(WorkerOptions opt) : opt_(std::move(opt)) {
  if (opt_.python.empty()) opt_.python = default_python();
  if (opt_.subjects_dir.empty()) opt_.subjects_dir = FLCE_SUBJECTS_DIR;
  std::string tmpl = (fs::temp_directory_path() / fmt::format("flce-worker-{}-XXXXXX", ::getpid())).string();  // honours TMPDIR
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory for the worker");
  dir_ = tmpl;
  log_path_ = dir_ + "/stderr.log";
  try {
    const std::string shm = fmt::format("{}/flce-{}-{}", shared_memory_dir(), ::getpid(), fs::path(dir_).filename().string());
    in_shm_ = std::make_unique<SharedFile>(shm + ".in");
    out_shm_ = std::make_unique<SharedFile>(shm + ".out");
    start();
    environment();  // throws, with the worker's stderr tail, when torch or the runner cannot load
  } catch (...) {
    proc_.kill();  // no destructor runs for a half-built object
    for (auto* f : {in_shm_.get(), out_shm_.get()}) if (f) ::unlink(f->path().c_str());
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

SubjectWorker::~SubjectWorker() {
  proc_.stop(5.0);  // EOF on stdin ends the worker's loop; then insist
  for (auto* f : {in_shm_.get(), out_shm_.get()}) if (f) ::unlink(f->path().c_str());
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

ProcessSpec subject_host_spec(const std::string& python, const std::string& subjects_dir,
                              const std::string& stacks_path, const std::function<const char*(const char*)>& getenv) {
  ProcessSpec spec;
  spec.exe = python.empty() ? default_python() : python;
  spec.args = {"-m", "flce_subjects.subprocess_worker"};
  spec.unset = {"PYTHONHOME", kZygoteEnv};  // the host never asks a zygote itself
  const char* pp = getenv("PYTHONPATH");
  const std::string dir = subjects_dir.empty() ? std::string(FLCE_SUBJECTS_DIR) : subjects_dir;
  spec.env = {"PYTHONPATH=" + dir + (pp && *pp ? std::string(":") + pp : ""), "PYTHONUNBUFFERED=1",
              "PYTHONFAULTHANDLER=1"};  // a crash leaves its Python stack in the log
  // Inductor's compile pool costs more to start than it saves on flce's small graphs, and
  // the gate already runs two workers side by side (measured: 80 s vs 93 s, cold cache).
  if (!getenv("TORCHINDUCTOR_COMPILE_THREADS")) spec.env.push_back("TORCHINDUCTOR_COMPILE_THREADS=1");
  spec.env.push_back(std::string(kStacksFileEnv) + "=" + stacks_path);
  return spec;
}

void SubjectWorker::start() {
  if (access(opt_.python.c_str(), X_OK) != 0)
    throw std::runtime_error(fmt::format("no Python interpreter at {}", opt_.python));
  // Where the host dumps its Python stacks when asked (process/stacks.hpp): a campaign names
  // one per worker slot; otherwise this worker's own folder.
  const char* sf = std::getenv(kStacksFileEnv);
  stacks_path_ = sf && *sf ? sf : dir_ + "/stacks.txt";
  ProcessSpec spec =
      subject_host_spec(opt_.python, opt_.subjects_dir, stacks_path_, [](const char* k) { return std::getenv(k); });
  spec.log_path = log_path_;
  spec.append_log = true;
  forked_ = false;
  if (!opt_.zygote.empty()) {
    std::string why;
    // Long enough for the zygote's own import on a loaded box, shorter than a campaign's startup limit.
    if (spawn_through_zygote(proc_, spec, opt_.zygote, 240, &why)) {
      forked_ = true;
      set_stack_forward_target(proc_.pid());
      std::ofstream(adopted_host_file(stacks_path_), std::ios::trunc) << proc_.pid() << "\n";  // for a hang's report
      return;
    }
    std::fprintf(stderr, "flce: worker %s: its subject host is spawned, not forked: %s\n", opt_.label.c_str(),
                 why.c_str());
    opt_.zygote.clear();  // it would answer the same again
  }
  std::error_code ec;
  fs::remove(adopted_host_file(stacks_path_), ec);
  proc_.spawn(spec);
  set_stack_forward_target(proc_.pid());
}

std::string SubjectWorker::log_tail() const {
  std::ifstream f(log_path_);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

std::optional<nlohmann::json> SubjectWorker::request(const nlohmann::json& req, std::string* why) {
  if (!proc_.alive()) start();
  proc_.send(req.dump() + "\n");  // a dead child shows on the read below
  std::string reply;
  switch (proc_.read_line(reply, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(opt_.timeout_s)))) {
    case Process::Read::LINE:
      try {
        return nlohmann::json::parse(reply);
      } catch (const std::exception& e) {
        *why = fmt::format("unreadable reply from the worker ({}): {}", e.what(), reply.substr(0, 200));
        proc_.kill();
        return std::nullopt;
      }
    case Process::Read::TIMEOUT: {
      // Where it hung, before the kill: the stacks go to our stderr (a campaign's worker.log),
      // never into the error chain (they would unsettle bucket ids).
      last_stacks_ = stacks_report(fmt::format("gave up on a subject call after {:g} s ({} {})", opt_.timeout_s,
                                               req.value("op", "?"), req.value("mode", "")),
                                   request_stacks(proc_.pid(), stacks_path_), process_tree_report(proc_.pid()));
      proc_.kill();
      std::fprintf(stderr, "flce: worker %s: no reply within %g s; its stacks:\n%s", opt_.label.c_str(), opt_.timeout_s,
                   last_stacks_.c_str());
      *why = fmt::format("no reply within {:g} s (worker killed)", opt_.timeout_s);
      return std::nullopt;
    }
    case Process::Read::END: break;
  }
  died_ = proc_.wait_exit();
  *why = "worker " + exit_text(died_);
  // The tail goes to our stderr, not into the error chain (it would unsettle bucket ids).
  std::string tail = log_tail();
  std::fprintf(stderr, "flce: worker %s (%s) %s%s%s\n", opt_.label.c_str(), opt_.python.c_str(), exit_text(died_).c_str(),
               tail.empty() ? "" : "; its stderr ends with:\n", tail.c_str());
  std::ofstream(log_path_, std::ios::trunc);  // the next crash shows only its own tail
  return std::nullopt;
}

SubjectResult SubjectWorker::call(const std::string& op, const Case& c, const Inputs& in, nlohmann::json req) {
  const uint64_t id = ++seq_;
  auto t0 = Clock::now();
  std::vector<Inputs> extra;
  auto tensors = input_tensors(c, in, extra);
  size_t total = 0;
  for (auto& t : tensors) total += aligned(t.bytes);
  char* base = in_shm_->reserve(total);
  nlohmann::json inputs = nlohmann::json::object();
  size_t off = 0;
  for (auto& t : tensors) {
    if (t.bytes) std::memcpy(base + off, t.data, t.bytes);
    inputs[t.name] = {{"offset", off}, {"bytes", t.bytes}, {"shape", t.shape},
                      {"dtype", std::string(dtype_name(t.dtype))}, {"storage", t.int64 ? "i64" : "f32"}};
    off += aligned(t.bytes);
  }
  double transfer_ms = ms_since(t0);
  req["op"] = op;
  req["id"] = id;
  req["case"] = nlohmann::json::parse(to_json(c, -1));
  req["inputs"] = inputs;
  req["in_shm"] = in_shm_->path();
  req["out_shm"] = out_shm_->path();
  std::string why;
  std::optional<nlohmann::json> res;
  died_.clear();
  try {
    res = request(req, &why);
  } catch (const std::exception& e) {  // a restart after a crash failed
    why = e.what();
  }
  if (!res) {
    SubjectResult r = worker_failure(why.find("no reply within") == 0 ? "flce.WorkerTimeout" : "flce.WorkerCrash", why);
    r.died = std::exchange(died_, "");
    r.wall_ms = ms_since(t0);
    return r;
  }
  SubjectResult r;
  const std::string status = str_or(*res, "status");
  r.status = status == "ok" ? SubjectStatus::OK : status == "unsupported" ? SubjectStatus::UNSUPPORTED : SubjectStatus::ERROR;
  r.reason = str_or(*res, "reason");
  if (res->contains("unsupported_params") && (*res)["unsupported_params"].is_array())
    for (auto& p : (*res)["unsupported_params"])
      if (p.is_string()) r.unsupported_params.push_back(p.get<std::string>());
  r.subject_version = str_or(*res, "subject_version");
  if (res->contains("wall_ms") && (*res)["wall_ms"].is_number()) r.wall_ms = (*res)["wall_ms"].get<double>();
  if (res->contains("transfer_ms") && (*res)["transfer_ms"].is_number()) transfer_ms += (*res)["transfer_ms"].get<double>();
  if (res->contains("paths") && (*res)["paths"].is_array())
    for (auto& p : (*res)["paths"]) r.paths.push_back(p.get<std::string>());
  if (res->contains("outputs") && (*res)["outputs"].is_object() && !(*res)["outputs"].empty()) {
    auto t1 = Clock::now();
    size_t size = 0;
    const char* out = out_shm_->view(&size);
    for (auto& [k, spec] : (*res)["outputs"].items()) {
      Tensor64 t;
      t.shape = spec.at("shape").get<std::vector<int64_t>>();
      t.dtype = parse_dtype(spec.at("dtype").get<std::string>()).value_or(DType::I64);
      const size_t at = spec.at("offset").get<size_t>(), n = static_cast<size_t>(t.numel());
      if (at + n * sizeof(double) > size)
        return worker_failure("flce.WorkerError", fmt::format("output {} lies outside the shared memory the worker wrote", k));
      t.data.resize(n);
      if (n) std::memcpy(t.data.data(), out + at, n * sizeof(double));
      r.outputs[k] = std::move(t);
    }
    transfer_ms += ms_since(t1);
  }
  r.transfer_ms = transfer_ms;
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

SubjectResult SubjectWorker::run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                                 const std::optional<Backend>& backend, const std::string& subject_path) {
  return call("run", c, in,
              {{"subject", subject},
               {"mode", mode},
               {"backend", backend ? nlohmann::json(std::string(name(*backend))) : nlohmann::json()},
               {"subject_path", subject_path.empty() ? nlohmann::json() : nlohmann::json(subject_path)}});
}

SubjectResult SubjectWorker::echo(const Case& c, const Inputs& in) { return call("echo", c, in, nlohmann::json::object()); }

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

std::vector<std::string> SubjectWorker::builtin_subjects() {
  std::string why;
  auto j = request({{"op", "builtin_subjects"}}, &why);
  if (!j) throw std::runtime_error(fmt::format("worker {}: {}", opt_.label, why));
  return j->value("subjects", std::vector<std::string>{});
}

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

SubjectCapabilities SubjectWorker::capabilities(const std::string& subject, const std::string& subject_path) {
  SubjectCapabilities caps;
  std::string why;
  auto j = request({{"op", "capabilities"},
                    {"subject", subject},
                    {"subject_path", subject_path.empty() ? nlohmann::json() : nlohmann::json(subject_path)}},
                   &why);
  if (!j) {
    caps.error = why;
    return caps;
  }
  caps.error = str_or(*j, "error");
  if (!caps.error.empty() || !j->value("flce", false)) return caps;
  caps.known = true;
  caps.params = j->value("params", std::vector<std::string>{});
  caps.lacks = j->value("lacks", std::vector<std::string>{});
  caps.callable = str_or(*j, "callable");
  if (j->contains("contract")) caps.contract = (*j)["contract"];
  return caps;
}

void SubjectWorker::reset() {
  std::string why;
  request({{"op", "reset"}}, &why);
}

SubjectWorker& default_subject_worker() {
  // Never destroyed before exit's static destructors: the child sees EOF and ends.
  static SubjectWorker w([] {
    WorkerOptions wo;
    wo.label = "subject process";
    if (const char* z = std::getenv(kZygoteEnv)) wo.zygote = z;  // a campaign worker's
    return wo;
  }());
  return w;
}

bool known_subject(const std::string& full, std::string* why) {
  std::string s = full;
  const std::string suffix = "+workaround";
  if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  if (s.find(':') != std::string::npos) return true;
  auto builtins = default_subject_worker().builtin_subjects();
  if (std::find(builtins.begin(), builtins.end(), s) != builtins.end()) return true;
  std::string list;
  for (auto& b : builtins) list += (list.empty() ? "" : ", ") + b;
  *why = fmt::format("unknown subject '{}': use a built-in ({}) or a plug-in 'package.module:callable'", s, list);
  return false;
}

}  // namespace flce
