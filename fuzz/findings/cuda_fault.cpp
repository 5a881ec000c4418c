#include "fuzz/findings/cuda_fault.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <regex>
#include <sstream>

#include "fuzz/findings/finding.hpp"
#include "repro/emit_python.hpp"
#include "case/case.hpp"
#include "oracles/subject_worker.hpp"
#include "process/process.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    v.push_back(l);
  }
  return v;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

// The CUDA errors that poison a context (judge/signature.hpp's cuda_context_lost), as the
// runtime, the driver and Triton's launcher word them.
const std::regex& cuda_error_re() {
  static const std::regex re(
      "(CUDA error|Triton Error \\[CUDA\\]|cudaError|CUDA_ERROR)[^:]*: *(.*)|(an illegal memory access was encountered|"
      "device-side assert triggered|unspecified launch failure|misaligned address|an illegal instruction was "
      "encountered)");
  return re;
}

// Frames of torch, triton and the interpreter's standard library are never "the launch": the
// subject's own code is (a package in site-packages included), and so is Inductor's generated
// module (under torchinductor_<user>/), which launches its kernels with `.run(`.
bool library_frame(const std::string& path) {
  if (path.find("torchinductor_") != std::string::npos) return false;
  if (path.rfind("<", 0) == 0 || path.find("/torch/") != std::string::npos || path.find("/triton/") != std::string::npos)
    return true;
  static const std::regex stdlib("/lib/python3\\.[0-9]+/(?!site-packages/|dist-packages/)");
  return std::regex_search(path, stdlib);
}

std::string kernel_from_launch_line(const std::string& code) {
  static const std::regex inductor_launch("([A-Za-z_][A-Za-z0-9_]*)\\.run\\("),
      triton_launch("([A-Za-z_][A-Za-z0-9_]*)\\s*\\[");
  std::smatch m;
  if (std::regex_search(code, m, inductor_launch)) return m[1];
  if (std::regex_search(code, m, triton_launch)) return m[1];
  return "";
}

}  // namespace

std::string short_kernel_name(const std::string& demangled) {
  std::string s = trim(demangled);
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0 && i > 0) return s.substr(0, i);
  }
  return s;
}

CudaFault parse_sanitizer_log(const std::string& log) {
  CudaFault f;
  static const std::regex report("^\\s*=+ ([A-Z][^ ].*)$"), at_new("^\\s*=+\\s+at (.+)\\+0x[0-9a-fA-F]+(?: in (.+))?$"),
      at_old("^\\s*=+\\s+at 0x[0-9a-fA-F]+ in (.+)$"), file_line_kernel("^(\\S+\\.[A-Za-z0-9]+:[0-9]+):(.+)$"),
      thread("^\\s*=+\\s+by (thread \\(.*\\) in block \\(.*\\))"), address("^\\s*=+\\s+((Address|Access to) 0x[0-9a-fA-F]+.*)$"),
      summary("^\\s*=+ ERROR SUMMARY: ([0-9]+) error"), program_hit("^\\s*=+ Program hit (.*)$");
  std::string last_report;
  bool in_report = false;
  for (const std::string& l : lines_of(log)) {
    std::smatch m;
    if (std::regex_search(l, m, summary)) {
      f.sanitizer_errors = std::stoi(m[1]);
      continue;
    }
    if (std::regex_search(l, m, program_hit)) {
      if (f.error.empty()) f.error = m[1];
      continue;
    }
    if (std::regex_search(l, m, report)) {
      const std::string text = m[1];
      in_report = text.rfind("COMPUTE-SANITIZER", 0) != 0 && text.rfind("Target application", 0) != 0;
      if (in_report) last_report = text;
      continue;
    }
    if (!in_report || !f.kernel.empty()) {
      if (in_report && f.thread.empty() && std::regex_search(l, m, thread)) f.thread = m[1];
      else if (in_report && f.address.empty() && std::regex_search(l, m, address)) f.address = m[1];
      continue;
    }
    // The first "at" line after a report names the kernel of the first fault.
    std::string kernel, where;
    if (std::regex_search(l, m, at_old)) {
      const std::string rest = m[1];
      std::smatch k;
      if (std::regex_search(rest, k, file_line_kernel)) where = k[1], kernel = k[2];
      else kernel = rest;
    } else if (std::regex_search(l, m, at_new)) {
      kernel = m[1];
      if (m[2].matched) where = m[2];
    } else {
      continue;
    }
    f.kernel = short_kernel_name(kernel);
    f.kernel_source = "compute-sanitizer";
    f.kernel_location = trim(where);
    f.access = last_report;
  }
  return f;
}

CudaFault parse_launch_traceback(const std::string& log) {
  CudaFault f;
  static const std::regex file_re("^\\s*File \"(.+)\", line ([0-9]+), in (.+)$");
  struct Frame {
    std::string path, line, func, code;
  };
  std::vector<Frame> frames;
  const std::vector<std::string> ls = lines_of(log);
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string& l = ls[i];
    std::smatch m;
    if (l.rfind("Traceback (most recent call last):", 0) == 0) {
      frames.clear();
      continue;
    }
    if (std::regex_search(l, m, file_re)) {
      Frame fr{m[1], m[2], trim(m[3]), ""};
      if (i + 1 < ls.size() && !std::regex_search(ls[i + 1], file_re)) {
        const std::string code = trim(ls[i + 1]);
        if (!code.empty() && code.find_first_not_of("^~ ") != std::string::npos) fr.code = code;
      }
      frames.push_back(fr);
      continue;
    }
    if (frames.empty() || l.empty() || l[0] == ' ') continue;
    // The exception line that ends this traceback: is it the CUDA error?
    std::smatch e;
    if (std::regex_search(l, e, cuda_error_re())) {
      f.error = e[2].matched && e[2].length() > 0 ? trim(e[2]) : e[3].matched ? std::string(e[3]) : trim(l);
      for (auto fr = frames.rbegin(); fr != frames.rend(); ++fr) {
        if (library_frame(fr->path)) continue;
        f.launch = fmt::format("{}:{}:{}", fr->path, fr->line, fr->func);
        f.launch_code = fr->code;
        f.kernel = kernel_from_launch_line(fr->code);
        if (!f.kernel.empty()) f.kernel_source = "launch line";
        break;
      }
      return f;  // the first CUDA error is the fault; later ones are its echo
    }
    frames.clear();
  }
  return f;
}

CudaFault parse_cuda_fault_log(const std::string& log) {
  CudaFault t = parse_launch_traceback(log);
  const CudaFault s = parse_sanitizer_log(log);
  if (!s.kernel.empty()) {
    t.kernel = s.kernel;
    t.kernel_source = s.kernel_source;
  }
  t.access = s.access;
  t.kernel_location = s.kernel_location;
  t.thread = s.thread;
  t.address = s.address;
  t.sanitizer_errors = s.sanitizer_errors;
  if (t.error.empty()) t.error = s.error;
  return t;
}

nlohmann::ordered_json cuda_fault_json(const CudaFault& f) {
  nlohmann::ordered_json j{{"kernel", f.kernel},          {"kernel_source", f.kernel_source},
                           {"launch", f.launch},          {"launch_code", f.launch_code},
                           {"error", f.error},            {"access", f.access},
                           {"kernel_location", f.kernel_location}, {"thread", f.thread},
                           {"address", f.address}};
  if (f.sanitizer_errors >= 0) j["sanitizer_errors"] = f.sanitizer_errors;
  return j;
}

std::string find_compute_sanitizer() {
  if (const char* v = std::getenv("FLCE_COMPUTE_SANITIZER")) return v;
  auto exe = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; };
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty() && exe(fs::path(d) / "compute-sanitizer")) return (fs::path(d) / "compute-sanitizer").string();
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) {
      for (const char* sub : {"bin/compute-sanitizer", "compute-sanitizer/compute-sanitizer"})
        if (exe(fs::path(v) / sub)) return (fs::path(v) / sub).string();
    }
  for (const char* p : {"/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer"})
    if (exe(p)) return p;
  return "";
}

std::vector<std::vector<std::string>> cuda_fault_commands(const CudaFaultRerun& r) {
  std::vector<std::vector<std::string>> cmds{{r.python, r.script, "--verbose"}};
  if (!r.sanitizer.empty())
    // torch's caching allocator off for memcheck: it sees cudaMalloc's bounds only, so a read past
    // a tensor into the rest of the pool's block would pass unseen (PyTorch's CUDA semantics notes)
    cmds.push_back({r.sanitizer, "--tool", "memcheck", "--print-limit", "10", "/usr/bin/env", kNoCachingAllocator,
                    r.python, r.script, "--verbose"});
  return cmds;
}

namespace {

// One run: stdout through the pipe, stderr into a side file; killed (with its group) at the deadline.
std::string run_logged(const std::vector<std::string>& argv, const std::vector<std::string>& env, double timeout_s,
                       const fs::path& stderr_path, std::string* how) {
  Process p;
  ProcessSpec spec;
  spec.exe = argv.front();
  spec.args.assign(argv.begin() + 1, argv.end());
  spec.env = env;
  spec.log_path = stderr_path.string();
  std::string out;
  try {
    p.spawn(spec);
  } catch (const std::exception& e) {
    *how = std::string("did not start: ") + e.what();
    return out;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    std::string line;
    const Process::Read r = p.read_line(line, deadline);
    if (r == Process::Read::LINE) {
      out += line + "\n";
    } else if (r == Process::Read::END) {
      *how = p.wait_exit();
      break;
    } else {
      *how = fmt::format("killed after {:.0f} s ({})", timeout_s, p.kill());
      break;
    }
  }
  return out;
}

}  // namespace

std::string rerun_cuda_fault(const fs::path& finding_dir, const CudaFaultRerun& r) {
  nlohmann::ordered_json j;
  auto save = [&](const std::string& status) {
    j["status"] = status;
    write_atomic(finding_dir / "cuda_fault.json", j.dump(2) + "\n");
    return status;
  };
  // Visible devices as flce counts them for its workers (CUDA_VISIBLE_DEVICES, else the driver's).
  const bool cuda_here = !r.gpu.empty() || !visible_gpus().empty();
  if (!cuda_here) return save("skipped: no CUDA device visible here (the re-run needs the GPU that faulted)");
  std::vector<std::string> env(std::begin(kCudaFaultEnv), std::end(kCudaFaultEnv));
  const char* pp = std::getenv("PYTHONPATH");
  env.push_back("PYTHONPATH=" + r.pythonpath + (pp && *pp ? std::string(":") + pp : ""));
  if (!r.gpu.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + r.gpu);
  std::string log;
  auto commands = nlohmann::ordered_json::array();
  const fs::path err_path = finding_dir / ".cuda_fault.stderr";
  for (const auto& argv : cuda_fault_commands(r)) {
    std::string line;
    for (auto& e : env) line += e + " ";
    for (auto& a : argv) line += a + " ";
    line.pop_back();
    std::string how;
    const std::string out = run_logged(argv, env, r.timeout_s, err_path, &how);
    log += fmt::format("$ {}\n# ended: {}\n{}{}\n", line, how, out, read_text(err_path));
    commands.push_back({{"command", line}, {"ended", how}});
  }
  std::error_code ec;
  fs::remove(err_path, ec);
  write_atomic(finding_dir / "cuda_fault.txt", log);
  j["commands"] = commands;
  if (r.sanitizer.empty()) j["sanitizer"] = "not found (FLCE_COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
  const CudaFault f = parse_cuda_fault_log(log);
  // Held in a named value: iterating items() of a temporary reads freed memory (the campaign's
  // SIGSEGV after a re-run on the H200, before cuda_fault.json was written).
  const nlohmann::ordered_json named = cuda_fault_json(f);
  for (auto& [k, v] : named.items()) j[k] = v;
  if (!f.kernel.empty() || !f.launch.empty()) return save("named");
  return save(f.error.empty() ? "unnamed: no CUDA error in either run (see cuda_fault.txt)"
                              : "unnamed: a CUDA error, but no launch frame or sanitizer report (see cuda_fault.txt)");
}

std::string name_cuda_fault(const fs::path& finding_dir, const std::string& signature, const ShrinkOptions& o,
                            const std::string& gpu, const std::string& signatures_json) {
  CudaFaultRerun r;
  r.python = default_python();
  r.pythonpath = (fs::path(FLCE_SOURCE_DIR) / "subjects").string();
  r.gpu = gpu;
  r.timeout_s = o.case_timeout_s;
  if (o.deadline) {  // within the campaign's grace: a shared box gets its cores back on time
    const double left = std::chrono::duration<double>(*o.deadline - std::chrono::steady_clock::now()).count();
    if (left < 5) {
      const std::string why = "skipped: the campaign's --grace-s ran out before the fault re-run";
      write_atomic(finding_dir / "cuda_fault.json", nlohmann::json{{"status", why}}.dump(2) + "\n");
      return why;
    }
    r.timeout_s = std::min(r.timeout_s, left / 2);  // two runs: launch-blocking, then the sanitizer
  }
  r.sanitizer = find_compute_sanitizer();
  // The re-run reads the tracebacks the long script prints with --verbose: the finding's
  // repro.py when it is one, else a long script of the shrunk case (which a short repro.py
  // implies) or of the case as found.
  fs::path script = finding_dir / "repro.py";
  std::error_code ec;
  const bool short_repro = fs::exists(script, ec) && read_text(script).find("PAYLOAD = json.loads(") == std::string::npos;
  if (!fs::exists(script, ec) || short_repro) {
    script = finding_dir / "cuda_fault_repro.py";
    try {
      const fs::path case_path = finding_dir / (short_repro ? "minimized.json" : "case.json");
      EmitSpec spec{from_json(read_text(case_path)), o.worker.subject, o.worker.subject_path, case_path.string(),
                    {{"", "any", signature}}, signatures_json, true};
      write_atomic(script, emit_python(spec));
    } catch (const std::exception& e) {
      nlohmann::ordered_json j{{"status", fmt::format("skipped: no reproducer ({})", e.what())}};
      write_atomic(finding_dir / "cuda_fault.json", j.dump(2) + "\n");
      return j["status"];
    }
  }
  r.script = script.string();
  const std::string status = rerun_cuda_fault(finding_dir, r);
  if (!o.quiet) std::fprintf(stderr, "cuda fault %s: %s\n", finding_dir.filename().c_str(), status.c_str());
  return status;
}

}  // namespace flce
