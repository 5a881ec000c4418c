#include "process/bytecode_cache.hpp"

#include "fuzz/findings/worker_client.hpp"

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

std::string env_of(const ProcessSpec& p, const std::string& k) {
  for (auto& e : p.env)
    if (e.rfind(k + "=", 0) == 0) return e.substr(k.size() + 1);
  return "<unset>";
}

// The campaign's workers read Triton's kernels through the box layer over the campaign's own
// cache (subjects' TritonBoxCache tests the layer itself); a user's own Triton settings win.
TEST(BoxCache, CampaignWorkersGetTritonsBoxLayerUnlessTheUserChoseTheirOwn) {
  Env env;
  env.set("TRITON_CACHE_DIR", nullptr);
  env.set("TRITON_CACHE_MANAGER", nullptr);
  env.set("FLCE_TRITON_BOX_CACHE", nullptr);
  env.set("XDG_CACHE_HOME", "/box/cache");
  WorkerLaunch l;
  l.cache_dir = "/runs/night/cache";
  l.triton_box = triton_box_dir();
  EXPECT_EQ(l.triton_box, "/box/cache/flce/triton");
  ProcessSpec w = worker_spec(l);
  EXPECT_EQ(env_of(w, "TRITON_CACHE_DIR"), "/runs/night/cache/triton");
  EXPECT_EQ(env_of(w, "TRITON_CACHE_MANAGER"), "flce_subjects.triton_box_cache:BoxCacheManager");
  EXPECT_EQ(env_of(w, "FLCE_TRITON_BOX_CACHE"), "/box/cache/flce/triton");

  env.set("FLCE_TRITON_BOX_CACHE", "off");
  EXPECT_EQ(triton_box_dir(), "");
  env.set("FLCE_TRITON_BOX_CACHE", nullptr);
  env.set("TRITON_CACHE_MANAGER", "theirs:Manager");  // inherited as it is
  EXPECT_EQ(env_of(worker_spec(l), "TRITON_CACHE_MANAGER"), "<unset>");
  env.set("TRITON_CACHE_MANAGER", nullptr);
  env.set("TRITON_CACHE_DIR", "/their/triton");  // their directory, Triton's own manager
  EXPECT_EQ(env_of(worker_spec(l), "TRITON_CACHE_MANAGER"), "<unset>");
  EXPECT_EQ(env_of(worker_spec(l), "TRITON_CACHE_DIR"), "<unset>");
}

}  // namespace
}  // namespace flce
