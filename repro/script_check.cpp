#include "repro/script_check.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>
#include <stdexcept>

#include "judge/signature.hpp"
#include "oracles/subject_worker.hpp"
#include "report/write.hpp"
#include "process/process.hpp"

extern char** environ;

namespace flce {

namespace fs = std::filesystem;

namespace {

// flce's own settings a maintainer's shell does not have: every FLCE_* variable (the stacks
// file, the zygote, the Triton box cache) and the cache manager that reads them.
std::vector<std::string> flce_variables() {
  std::vector<std::string> names{"TRITON_CACHE_MANAGER"};
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("FLCE_", 0) == 0) names.push_back(kv.substr(0, kv.find('=')));
  }
  return names;
}

// PYTHONPATH without flce's subjects/ (a user may have put it there), and with it first where
// the script imports flce's own subjects.
std::string python_path(bool flce_subjects, const std::string& subjects) {
  std::string out = flce_subjects ? subjects : "";
  const char* pp = std::getenv("PYTHONPATH");
  std::stringstream ss(pp ? pp : "");
  for (std::string part; std::getline(ss, part, ':');) {
    std::error_code ec;
    if (part.empty() || fs::equivalent(part, subjects, ec)) continue;
    out += (out.empty() ? "" : ":") + part;
  }
  return out;
}

std::string last_lines(const std::string& text, size_t n) {
  std::deque<std::string> keep;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) {
    keep.push_back(l);
    if (keep.size() > n) keep.pop_front();
  }
  std::string out;
  for (auto& l : keep) out += l + "\n";
  return out;
}

}  // namespace

bool script_imports_flce_subjects(const std::string& subject) {
  if (subject.find(':') != std::string::npos) return false;
  const std::string base = subject.substr(0, subject.rfind("+workaround"));
  return base != "liger" && base != "torch-native" && base != "cce";
}

nlohmann::json ScriptCheck::to_json() const {
  return {{"verdict", verdict}, {"line", line}, {"exit", exit}, {"timed_out", timed_out},
          {"seconds", seconds}, {"tail", tail}, {"how", how}};
}

ScriptCheck check_script_alone(const std::string& script_path, const ScriptCheckOptions& opt) {
  std::error_code ec;
  const fs::path script = fs::absolute(script_path, ec);
  if (ec || !fs::is_regular_file(script)) throw std::runtime_error(fmt::format("no script at {}", script_path));
  const std::string python = opt.python.empty() ? default_python() : opt.python;
  if (::access(python.c_str(), X_OK) != 0) throw std::runtime_error(fmt::format("no Python interpreter at {}", python));
  std::string tmpl = (fs::temp_directory_path() / "flce-alone-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory for the script");
  const fs::path dir = tmpl;
  fs::create_directories(dir / "run");

  ProcessSpec spec;
  spec.exe = python;
  spec.args = {script.string()};
  spec.cwd = (dir / "run").string();
  spec.log_path = (dir / "stderr.log").string();
  spec.unset = flce_variables();
  // Fresh caches: nothing a campaign compiled before serves the script (Inductor's FX graph and
  // autotune caches, Triton's kernels), as on a machine that never ran flce.
  spec.env = {"TORCHINDUCTOR_CACHE_DIR=" + (dir / "inductor").string(), "TRITON_CACHE_DIR=" + (dir / "triton").string(),
              "PYTHONUNBUFFERED=1"};
  const std::string subjects = std::string(FLCE_SOURCE_DIR) + "/subjects";
  if (const std::string pp = python_path(opt.flce_subjects, subjects); pp.empty()) spec.unset.push_back("PYTHONPATH");
  else spec.env.push_back("PYTHONPATH=" + pp);

  ScriptCheck c;
  c.how = fmt::format("`{} {}` alone: in an empty directory, fresh Inductor and Triton caches, no FLCE_* variables{}",
                      python, script.filename().string(),
                      opt.flce_subjects ? ", flce's subjects/ on PYTHONPATH (its header asks for it)" : "");
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline =
      t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(opt.timeout_s));
  std::string out;
  {
    Process p;
    try {
      p.spawn(spec);
    } catch (...) {
      fs::remove_all(dir, ec);
      throw;
    }
    std::string line;
    Process::Read r;
    while ((r = p.read_line(line, deadline)) == Process::Read::LINE) out += line + "\n";
    const std::string how = r == Process::Read::TIMEOUT ? (p.kill(), std::string("timeout")) : p.wait_exit();
    if (how.rfind("exit-", 0) == 0) c.exit = std::atoi(how.c_str() + 5);
    c.timed_out = r == Process::Read::TIMEOUT;
    if (c.timed_out) out += fmt::format("(flce: killed after {:g} s)\n", opt.timeout_s);
    else if (c.exit < 0) out += fmt::format("(flce: the script ended by {})\n", how);
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::stringstream ss(out);
  for (std::string l; std::getline(ss, l);)
    if (!l.empty() && l.rfind("(flce: ", 0) != 0) c.line = l;
  for (const char* word : {"NOT REPRODUCED", "REPRODUCED", "SKIP"})
    if (c.line.rfind(word, 0) == 0) {
      c.verdict = word;
      break;
    }
  c.tail = last_lines(out, 12) + last_lines(read_text(dir / "stderr.log"), 20);
  fs::remove_all(dir, ec);
  return c;
}

// "REPRODUCED: X" -> X; "NOT REPRODUCED: got X, expected Y" -> X (flce's and the script's wording).
std::string outcome_in(const std::string& line) {
  if (line.rfind("REPRODUCED: ", 0) == 0) return line.substr(12);
  const size_t got = line.find("got ");
  if (line.rfind("NOT REPRODUCED", 0) != 0 || got == std::string::npos) return "";
  return line.substr(got + 4, line.find(", expected", got) - got - 4);
}

bool same_verdict(const ScriptCheck& c, const std::string& flce_line, int flce_exit) {
  if (flce_exit == 3) return c.verdict == "SKIP" && c.exit == 2;
  const bool reproduced = flce_line.rfind("REPRODUCED", 0) == 0;
  // The same compile failure at another stage is the same verdict: the script walks the ladder
  // of its one case, where a campaign's stage may come from its signature's walk on another graph.
  return c.verdict == (reproduced ? "REPRODUCED" : "NOT REPRODUCED") && c.exit == flce_exit &&
         same_failure(outcome_in(c.line), outcome_in(flce_line));
}

std::string check_path_for(const std::string& script_path) {
  fs::path p(script_path);
  return (p.parent_path() / (p.stem().string() + ".check.json")).string();
}

std::string script_fingerprint(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001b3ULL;
  return fmt::format("{:016x}", h);
}

std::string reproduce_command(const std::string& case_path, const std::string& subject, const std::string& subject_path,
                              const std::string& subject_git) {
  std::string s = "flce repro " + case_path + " --subject " + subject;
  if (!subject_git.empty()) s += " --subject-git " + subject_git;
  else if (!subject_path.empty()) s += " --subject-path " + subject_path;
  return s;
}

bool write_check(const std::string& script_path, const std::string& flce_line, int flce_exit, const ScriptCheck& c,
                 const std::string& reproduce_with) {
  const bool same = same_verdict(c, flce_line, flce_exit);
  const nlohmann::json j{{"script", script_path},
                         {"script_fingerprint", script_fingerprint(read_text(script_path))},
                         {"flce", {{"line", flce_line}, {"exit", flce_exit}}},
                         {"alone", c.to_json()},
                         {"same_verdict", same},
                         {"reproduce_with", reproduce_with}};
  write_atomic(check_path_for(script_path), j.dump(1) + "\n");
  return same;
}

}  // namespace flce
