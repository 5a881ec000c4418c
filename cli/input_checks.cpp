// Paths a verb is handed, checked before it starts anything (a subject host, a worker, a
// git export): a typo in --subject-path must not run as if the flag were absent, and an
// --out that names a file must not fail only after the work is done.
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli/commands.hpp"
#include "oracles/subject_worker.hpp"

namespace flce::cli {

namespace fs = std::filesystem;

namespace {

bool refuse(const char* verb, const char* flag, const std::string& path, const char* why) {
  std::fprintf(stderr, "flce %s: %s %s: %s\n", verb, flag, path.c_str(), why);
  exit_code() = kBadInput;
  return false;
}

}  // namespace

bool check_dir_option(const std::string& path, const char* flag, const char* verb) {
  if (path.empty()) return true;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  return refuse(verb, flag, path, fs::exists(path, ec) ? "not a directory" : "no such directory");
}

bool check_out_option(const std::string& path, const char* flag, const char* verb) {
  if (path.empty()) return true;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) return refuse(verb, flag, path, "exists and is not a directory");
  return true;
}

bool check_out_file_option(const std::string& path, const char* flag, const char* verb) {
  if (path.empty()) return true;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return refuse(verb, flag, path, "is a directory (give a file name)");
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) return refuse(verb, flag, path, "its directory does not exist");
  return true;
}

bool check_file_option(const std::string& path, const char* flag, const char* verb) {
  if (path.empty()) return true;
  std::error_code ec;
  if (!fs::exists(path, ec)) return refuse(verb, flag, path, "no such file");
  if (!fs::is_regular_file(path, ec)) return refuse(verb, flag, path, "not a regular file");
  if (!std::ifstream(path)) return refuse(verb, flag, path, "cannot be read");
  return true;
}

bool check_subject_usable(const std::string& subject, const std::string& subject_path, const char* verb) {
  const SubjectCapabilities caps = default_subject_worker().capabilities(subject, subject_path);
  // Only what says the subject itself is wrong. A built-in whose dependencies do not import here
  // (Liger's kernels on a machine without CUDA and Triton) is left to the run, which says
  // "cannot run here" (exit 3) as it always has; a plug-in that does not import is bad input.
  const bool plugin = subject.find(':') != std::string::npos;
  for (const char* bad : {"SignatureMismatch:", "ModuleNotFoundError:", "AttributeError:", "TypeError: subject "})
    if (caps.error.rfind(bad, 0) == 0 && (plugin || std::string(bad) == "SignatureMismatch:")) {
      std::fprintf(stderr, "flce %s: --subject %s%s%s: cannot be used: %s\n", verb, subject.c_str(),
                   subject_path.empty() ? "" : " (subject path ", subject_path.empty() ? "" : (subject_path + ")").c_str(),
                   caps.error.c_str());
      exit_code() = kBadInput;
      return false;
    }
  return true;
}

}  // namespace flce::cli
