// flce matrix: cases x torch installations (one venv each, made by scripts/matrix_envs.sh).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "cli/commands.hpp"
#include "gate/matrix.hpp"
#include "report/write.hpp"
#include "oracles/subject_worker.hpp"

namespace flce::cli {

void add_matrix_commands(CLI::App& app) {
  auto* m = app.add_subcommand("matrix", "Run cases across several torch installations and tabulate outcome, signature "
                                         "and first failing ladder stage per torch version");
  static std::string envs_dir, out, subject_path, subject_git;
  static std::vector<std::string> pythons, cases, subjects, only,
      corpora{std::string(FLCE_SOURCE_DIR) + "/corpus/expectations.json"};
  static bool workaround = false, strict = false, quiet = false;
  static int jobs = 2;
  static double timeout_s = 600;
  m->add_option("--envs", envs_dir, "Folder of venvs (each DIR/*/bin/python); default .venvs/ when it exists");
  m->add_option("--python", pythons, "A venv's interpreter (repeatable; instead of --envs)");
  m->add_option("--cases", cases, "Case files (instead of the corpus)");
  m->add_option("--corpus", corpora, "Pinned corpus (expectations.json; repeatable) when no --cases")->capture_default_str();
  m->add_option("--subject", subjects, "Subjects for --cases (repeatable; default model / aten-dtype-out by kind)");
  m->add_option("--subject-path", subject_path, "A subject source tree put first on sys.path in every environment");
  add_subject_git_option(m, subject_git);
  m->add_option("--only", only, "Only rows whose case path contains one of these texts (repeatable)");
  m->add_flag("--with-workaround", workaround, "Each row also as <subject>+workaround");
  m->add_option("-j,--jobs", jobs, "Environments run at once")->capture_default_str();
  m->add_option("--timeout", timeout_s, "Seconds per subject call before its worker is killed")->capture_default_str();
  m->add_option("--out", out, "Directory for matrix.md and matrix.json");
  m->add_flag("--strict", strict, "Exit 1 when a cell is regressed/changed against the corpus expectation");
  m->add_flag("-q,--quiet", quiet, "No per-cell progress on stderr");
  m->callback([] {
    namespace fs = std::filesystem;
    MatrixOptions opt;
    if (!check_out_option(out, "--out", "matrix") || !check_dir_option(envs_dir, "--envs", "matrix")) return;
    if (!resolve_subject_git(subject_git, subject_path, "matrix")) return;
    opt.subject_path = subject_path;
    opt.jobs = jobs;
    opt.timeout_s = timeout_s;
    for (auto& p : pythons) opt.envs.push_back({p, p});
    std::string dir = envs_dir;
    if (dir.empty() && pythons.empty() && fs::is_directory(std::string(FLCE_SOURCE_DIR) + "/.venvs"))
      dir = std::string(FLCE_SOURCE_DIR) + "/.venvs";
    if (!dir.empty()) {
      auto found = envs_from_dir(dir);
      if (found.empty()) {
        std::fprintf(stderr, "flce matrix: no venvs (DIR/*/bin/python) under %s; see scripts/matrix_envs.sh\n", dir.c_str());
        exit_code() = kBadInput;
        return;
      }
      opt.envs.insert(opt.envs.end(), found.begin(), found.end());
    }
    if (opt.envs.empty()) opt.envs.push_back({"default", default_python()});
    for (auto& e : opt.envs)
      if (!fs::exists(e.python)) {
        std::fprintf(stderr, "flce matrix: no Python interpreter at %s\n", e.python.c_str());
        exit_code() = kBadInput;
        return;
      }
    if (cases.empty()) {
      for (auto& c : corpora) {
        auto rows = matrix_rows_from_corpus(c);
        opt.rows.insert(opt.rows.end(), rows.begin(), rows.end());
      }
    } else {
      opt.rows = matrix_rows_from_files(cases, subjects);
    }
    if (!only.empty())
      std::erase_if(opt.rows, [](const MatrixRow& r) {
        return std::none_of(only.begin(), only.end(), [&](auto& o) { return r.id.find(o) != std::string::npos; });
      });
    if (workaround) add_workaround_rows(opt.rows);
    if (opt.rows.empty()) {
      std::fprintf(stderr, "flce matrix: no cases selected\n");
      exit_code() = kBadInput;
      return;
    }
    if (!quiet) opt.progress = [](const std::string& s) { std::fprintf(stderr, "[matrix] %s\n", s.c_str()); };
    MatrixReport rep = run_matrix(opt);
    std::printf("%s", matrix_text(rep).c_str());
    if (!out.empty()) {
      fs::create_directories(out);
      write_atomic(fs::path(out) / "matrix.md", matrix_markdown(rep));
      write_atomic(fs::path(out) / "matrix.json", matrix_json(rep).dump(2) + "\n");
    }
    int broken = 0, contradicted = 0;
    for (auto& c : rep.cols) broken += !c.error.empty();
    for (auto& row : rep.cells)
      for (auto& c : row) contradicted += c.verdict == "regressed" || c.verdict == "changed";
    if (broken) {
      exit_code() = kBadInput;  // an environment that cannot import torch or the runner
      return;
    }
    exit_code() = strict && contradicted ? kFinding : kOk;
  });
}

}  // namespace flce::cli
