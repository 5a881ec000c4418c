#include "oracles/subject_identity.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oracles/git_object.hpp"
#include "oracles/subject_tree.hpp"
#include "process/bytecode_cache.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

bool is_object_id(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

void read_table(const fs::path& file, const std::string& tree, std::vector<std::string>& out) {
  std::ifstream in(file);
  if (!in) return;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("format", "") != "flce-identity-index/1" || !j.contains("trees") || !j["trees"].is_object())
    return;
  auto it = j["trees"].find(tree);
  if (it == j["trees"].end() || !it->is_array()) return;
  for (auto& c : *it)
    if (c.is_string() && is_object_id(c.get<std::string>()) &&
        std::find(out.begin(), out.end(), c.get<std::string>()) == out.end())
      out.push_back(c.get<std::string>());
}

}  // namespace

std::string identity_index_location() {
  if (const char* v = std::getenv("FLCE_IDENTITY_INDEX"); v && *v) return v;
  return box_cache_dir("identity");
}

IdentityIndex build_identity_index(const std::string& repo, const std::vector<std::string>& refs,
                                   const std::string& path) {
  IdentityIndex ix;
  ix.repo = fs::absolute(repo).lexically_normal().string();
  ix.path = path;
  ix.refs = refs;
  std::vector<std::string> commits_in{"rev-list"};
  for (auto& r : refs)  // resolved one by one, so that a bad ref is named
    commits_in.push_back(r == "--all" ? r : resolve_commit(repo, r));
  const CommandResult list = git(repo, commits_in);
  if (!list.ok()) throw SubjectTreeError(fmt::format("{}: git rev-list failed: {}", repo, list.err));
  const std::vector<std::string> commits = lines(list.out);
  // One rev-parse per chunk of commits; a chunk with a commit lacking `path` falls back to one
  // at a time (rev-parse stops at the first it cannot resolve).
  const size_t chunk = 256;
  for (size_t at = 0; at < commits.size(); at += chunk) {
    const size_t end = std::min(commits.size(), at + chunk);
    std::vector<std::string> args{"rev-parse"};
    for (size_t i = at; i < end; ++i) args.push_back(commits[i] + ":" + path);
    CommandResult r = git(repo, args);
    std::vector<std::string> trees = r.ok() ? lines(r.out) : std::vector<std::string>{};
    if (trees.size() != end - at) {
      trees.clear();
      for (size_t i = at; i < end; ++i) {
        CommandResult one = git(repo, {"rev-parse", "--verify", "--quiet", commits[i] + ":" + path});
        trees.push_back(one.ok() ? one.line() : "");
      }
    }
    for (size_t i = at; i < end; ++i)
      if (is_object_id(trees[i - at])) ix.trees[trees[i - at]].push_back(commits[i]);
  }
  return ix;
}

void write_identity_index(const IdentityIndex& index, const std::string& file) {
  nlohmann::ordered_json j{{"format", "flce-identity-index/1"}, {"repo", index.repo}, {"path", index.path},
                           {"refs", index.refs}, {"trees", index.trees}};
  const fs::path p = fs::absolute(file);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const fs::path tmp = p.string() + fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write it", tmp.string()));
  }
  fs::rename(tmp, p, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", p.string(), ec.message()));
}

std::vector<std::string> commits_with_tree(const std::string& tree, const std::string& location_in) {
  std::vector<std::string> out;
  const std::string location = location_in.empty() ? identity_index_location() : location_in;
  if (location.empty()) return out;
  std::error_code ec;
  if (fs::is_directory(location, ec)) {
    std::vector<fs::path> files;
    for (auto it = fs::directory_iterator(location, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".json") files.push_back(it->path());
    std::sort(files.begin(), files.end());  // a fixed order: the same answer every time
    for (auto& f : files) read_table(f, tree, out);
  } else {
    read_table(location, tree, out);
  }
  return out;
}

std::string SubjectIdentity::text() const {
  if (kind == "builtin") return builtin;
  std::string s = fmt::format("tree {}", tree.substr(0, 12));
  if (!commit.empty()) s += fmt::format(" = git {}", commit.substr(0, 12));
  else s += " (no known commit)";
  if (!also.empty()) {
    s += " (also";
    for (size_t i = 0; i < also.size() && i < 4; ++i) s += " " + also[i].substr(0, 12);
    if (also.size() > 4) s += fmt::format(" and {} more", also.size() - 4);
    s += ")";
  }
  return s;
}

std::string SubjectIdentity::key() const {
  if (kind == "builtin") return "builtin " + builtin;
  if (!commit.empty()) return "git " + commit;
  return "tree " + tree;
}

SubjectIdentity identify_subject(const std::string& subject_path, const std::string& commit, const std::string& builtin,
                                 const std::string& index_location) {
  SubjectIdentity id;
  if (subject_path.empty()) {
    id.kind = "builtin";
    id.builtin = builtin;
    return id;
  }
  id.path = fs::absolute(subject_path).lexically_normal().string();
  id.tree = git_tree_id(id.path);
  if (!commit.empty()) {
    id.kind = "git";
    id.commit = commit;
    return id;
  }
  id.kind = "tree";
  std::vector<std::string> commits = commits_with_tree(id.tree, index_location);
  if (!commits.empty()) {
    id.commit = commits.front();
    id.also.assign(commits.begin() + 1, commits.end());
  }
  return id;
}

}  // namespace flce
