#include "oracles/subject_tree.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <system_error>

namespace flce {

namespace fs = std::filesystem;

namespace {

// git's own words, on one line, for a message.
std::string said(const CommandResult& r) {
  std::string s = r.err.empty() ? r.out : r.err;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s.empty() ? fmt::format("exit status {}", r.status) : s;
}

bool is_hex40(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void check_repo(const std::string& repo) {
  if (repo.empty()) throw SubjectTreeError("empty repository path");
  if (!fs::is_directory(repo)) throw SubjectTreeError(fmt::format("{}: no such directory", repo));
  CommandResult r = git(repo, {"rev-parse", "--git-dir"});
  if (!r.ok()) throw SubjectTreeError(fmt::format("{}: not a git repository ({})", repo, said(r)));
}

// Interrupted exports leave their temp directory behind; one older than a day is no
// export still under way.
void sweep_stale(const fs::path& cache) {
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (auto it = fs::directory_iterator(cache, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".tmp-", 0) != 0) continue;
    std::error_code e2;
    if (fs::last_write_time(it->path(), e2) < cutoff && !e2) fs::remove_all(it->path(), e2);
  }
}

}  // namespace

GitSpec parse_git_spec(const std::string& text) {
  const size_t at = text.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == text.size())
    throw SubjectTreeError(fmt::format("'{}': expected /path/to/repo@REF", text));
  return {text.substr(0, at), text.substr(at + 1)};
}

std::string tree_cache_dir() {
  fs::path dir;
  if (const char* v = std::getenv("FLCE_TREE_CACHE"); v && *v) {
    dir = v;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "flce" / "trees";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".cache" / "flce" / "trees";
  } else {
    dir = fs::temp_directory_path() / "flce-trees";
  }
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  return (ec ? dir : abs).string();
}

CommandResult git(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

std::string resolve_commit(const std::string& repo, const std::string& ref) {
  check_repo(repo);
  if (ref.empty()) throw SubjectTreeError(fmt::format("{}@: empty ref", repo));
  CommandResult r = git(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"});
  const std::string id = r.line();
  if (!r.ok() || !is_hex40(id)) throw SubjectTreeError(fmt::format("{}@{}: unknown ref (no commit of that name)", repo, ref));
  return id;
}

std::string commit_subject(const std::string& repo, const std::string& commit) {
  CommandResult r = git(repo, {"log", "-1", "--format=%s", commit, "--"});
  return r.ok() ? r.line() : "";
}

std::string merge_base(const std::string& repo, const std::string& a, const std::string& b) {
  const std::string ca = resolve_commit(repo, a), cb = resolve_commit(repo, b);
  CommandResult r = git(repo, {"merge-base", ca, cb});
  if (!r.ok() || !is_hex40(r.line()))
    throw SubjectTreeError(fmt::format("{}: {} and {} have no merge base", repo, a, b));
  return r.line();
}

SubjectTree export_subject_tree(const std::string& repo, const std::string& ref, const std::string& inner,
                                const std::string& cache_in) {
  SubjectTree t;
  t.repo = repo;
  t.ref = ref;
  t.commit = resolve_commit(repo, ref);
  t.subject_line = commit_subject(repo, t.commit);
  const fs::path cache = cache_in.empty() ? fs::path(tree_cache_dir()) : fs::absolute(cache_in);
  const fs::path final_dir = cache / t.commit;
  const std::string spec = repo + "@" + ref;
  std::error_code ec;
  if (fs::is_directory(final_dir)) {
    t.reused = true;
  } else {
    fs::create_directories(cache, ec);
    if (ec) throw SubjectTreeError(fmt::format("{}: cannot create the tree cache {}: {}", spec, cache.string(), ec.message()));
    sweep_stale(cache);
    std::string tmpl = (cache / (".tmp-" + t.commit.substr(0, 12) + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data()))
      throw SubjectTreeError(fmt::format("{}: cannot create a directory in {}: {}", spec, cache.string(), std::strerror(errno)));
    const fs::path tmp = tmpl, tar = tmp / "tree.tar", tree = tmp / "tree";
    auto fail = [&](const std::string& what) {
      std::error_code e2;
      fs::remove_all(tmp, e2);
      throw SubjectTreeError(fmt::format("{} ({}): {}", spec, t.commit.substr(0, 12), what));
    };
    CommandResult a = git(repo, {"archive", "--format=tar", "-o", tar.string(), t.commit});
    // A repository that lacks some blobs (a shallow or partial mirror whose large test data
    // was left out) cannot archive the whole tree; the subject runs from src/, so that much
    // is enough when it is whole.
    if (!a.ok() && inner.empty() && git(repo, {"cat-file", "-e", t.commit + ":src"}).ok()) {
      CommandResult s = git(repo, {"archive", "--format=tar", "-o", tar.string(), t.commit, "src"});
      if (s.ok()) {
        a = s;
        t.partial = true;
      }
    }
    if (!a.ok()) fail("git archive failed: " + said(a));
    fs::create_directories(tree, ec);
    if (ec) fail("cannot create " + tree.string() + ": " + ec.message());
    CommandResult x = run_command({"tar", "-xf", tar.string(), "-C", tree.string()});
    if (!x.ok()) fail("tar -x failed: " + said(x));
    fs::remove(tar, ec);
    // The rename publishes the whole tree at once. Another process may have won the race:
    // its tree is the same commit's, so use that one.
    if (::rename(tree.c_str(), final_dir.c_str()) != 0) {
      const int e = errno;
      if (!fs::is_directory(final_dir)) fail(fmt::format("cannot rename into {}: {}", final_dir.string(), std::strerror(e)));
      t.reused = true;
    }
    fs::remove_all(tmp, ec);
  }
  t.root = final_dir.string();
  if (!inner.empty()) {
    const fs::path p = final_dir / inner;
    if (!fs::is_directory(p))
      throw SubjectTreeError(fmt::format("{}: path={}: no such directory in commit {}", spec, inner, t.commit.substr(0, 12)));
    t.subject_path = p.lexically_normal().string();
    while (t.subject_path.size() > 1 && t.subject_path.back() == '/') t.subject_path.pop_back();
  } else {
    t.subject_path = fs::is_directory(final_dir / "src") ? (final_dir / "src").string() : t.root;
  }
  return t;
}

}  // namespace flce
