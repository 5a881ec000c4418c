#include "process/bytecode_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace flce {
namespace {

namespace fs = std::filesystem;

// Sets variables for one test and puts the old values back after it.
class Env {
 public:
  ~Env() {
    for (auto& [k, v] : saved_) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
  }
  void set(const std::string& k, const char* v) {
    const char* old = std::getenv(k.c_str());
    saved_.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
    v ? ::setenv(k.c_str(), v, 1) : ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string env_or(const char* k, const char* dflt) {
  const char* v = std::getenv(k);
  return v ? v : dflt;
}

TEST(BytecodeCache, OverridesDontWriteBytecodeWithAPrefixUnderFlceCache) {
  Env env;
  fs::path dir = fs::temp_directory_path() / "flce-bytecode-test" / "pyc";
  fs::remove_all(dir.parent_path());
  env.set("PYTHONPYCACHEPREFIX", nullptr);
  env.set("PYTHONDONTWRITEBYTECODE", "1");
  env.set("FLCE_PYCACHE", dir.c_str());
  EXPECT_EQ(use_bytecode_cache(), dir.string());
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(env_or("PYTHONPYCACHEPREFIX", "<unset>"), dir.string());
  EXPECT_EQ(env_or("PYTHONDONTWRITEBYTECODE", "<unset>"), "");  // empty: Python writes bytecode
  fs::remove_all(dir.parent_path());
}

TEST(BytecodeCache, ForbiddenBytecodeGoesToXdgCacheHome) {
  Env env;
  fs::path home = fs::temp_directory_path() / "flce-bytecode-xdg";
  env.set("PYTHONPYCACHEPREFIX", nullptr);
  env.set("FLCE_PYCACHE", nullptr);
  env.set("XDG_CACHE_HOME", home.c_str());
  env.set("PYTHONDONTWRITEBYTECODE", "1");
  EXPECT_EQ(bytecode_cache_dir(), (home / "flce" / "pycache").string());
  fs::remove_all(home);
}

TEST(BytecodeCache, NothingToDoWherePythonWritesBytecodeItself) {
  Env env;
  env.set("PYTHONPYCACHEPREFIX", nullptr);
  env.set("FLCE_PYCACHE", nullptr);
  env.set("PYTHONDONTWRITEBYTECODE", nullptr);
  EXPECT_EQ(use_bytecode_cache(), "");
  EXPECT_EQ(env_or("PYTHONPYCACHEPREFIX", "<unset>"), "<unset>");
  env.set("PYTHONDONTWRITEBYTECODE", "");  // empty counts as unset for Python too
  EXPECT_EQ(use_bytecode_cache(), "");
}

TEST(BytecodeCache, OffAndAUserPrefixLeaveTheEnvironmentAlone) {
  Env env;
  env.set("PYTHONDONTWRITEBYTECODE", "1");
  env.set("PYTHONPYCACHEPREFIX", nullptr);
  env.set("FLCE_PYCACHE", "off");
  EXPECT_EQ(use_bytecode_cache(), "");
  EXPECT_EQ(env_or("PYTHONDONTWRITEBYTECODE", "<unset>"), "1");
  EXPECT_EQ(env_or("PYTHONPYCACHEPREFIX", "<unset>"), "<unset>");

  env.set("FLCE_PYCACHE", nullptr);
  env.set("PYTHONPYCACHEPREFIX", "/somewhere/the/user/chose");
  EXPECT_EQ(use_bytecode_cache(), "");
  EXPECT_EQ(env_or("PYTHONPYCACHEPREFIX", ""), "/somewhere/the/user/chose");
  EXPECT_EQ(env_or("PYTHONDONTWRITEBYTECODE", "<unset>"), "1");
}

TEST(BytecodeCache, AnUnusableDirectoryMeansNoCacheNotAnError) {
  Env env;
  env.set("PYTHONPYCACHEPREFIX", nullptr);
  env.set("FLCE_PYCACHE", "/proc/flce-cannot-create-this");
  EXPECT_EQ(bytecode_cache_dir(), "");
}

}  // namespace
}  // namespace flce
