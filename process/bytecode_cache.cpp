#include "process/bytecode_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace flce {

namespace fs = std::filesystem;

std::string box_cache_dir(const std::string& name) {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "flce" / name).string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "flce" / name).string();
  return "";
}

std::string bytecode_cache_dir() {
  const char* user_prefix = std::getenv("PYTHONPYCACHEPREFIX");
  if (user_prefix && *user_prefix) return "";
  fs::path dir;
  if (const char* v = std::getenv("FLCE_PYCACHE"); v && *v) {
    if (std::string(v) == "off") return "";
    dir = v;
  } else if (const char* no = std::getenv("PYTHONDONTWRITEBYTECODE"); !no || !*no) {
    return "";  // Python keeps __pycache__ next to the sources itself
  } else if (dir = box_cache_dir("pycache"); dir.empty()) {
    return "";
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) return "";  // a cache is an optimization: go on without it
  return fs::absolute(dir, ec).string();
}

std::string use_bytecode_cache() {
  std::string dir = bytecode_cache_dir();
  if (dir.empty()) return "";
  ::setenv("PYTHONPYCACHEPREFIX", dir.c_str(), 1);
  ::setenv("PYTHONDONTWRITEBYTECODE", "", 1);  // Python reads only a non-empty value as "set"
  return dir;
}

}  // namespace flce
