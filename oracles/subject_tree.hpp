// A subject's source tree at one git commit, without touching the user's repository: the
// commit's tree is exported with `git archive` into a cache keyed by the resolved commit id
// (${XDG_CACHE_HOME:-~/.cache}/flce/trees/<40-hex>/, FLCE_TREE_CACHE to move it), written
// into a temp directory beside it and renamed into place, so concurrent flce processes and
// interrupted exports never see half a tree; a tree already there is reused. The worktree,
// index and .git of REPO are only read (rev-parse, archive, log), never written.
//
// What `--subject-git REPO@REF` (run, campaign, minimize, repro), `git=REPO@REF` (gate and
// matrix SPECs) and `flce bisect` run against.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "process/command.hpp"

namespace flce {

// Bad input: no such repository, an unknown ref, an export that failed. The message names
// the spec ("REPO@REF: ...").
struct SubjectTreeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "REPO@REF": REF after the last '@' (so REPO may contain one). Throws SubjectTreeError.
struct GitSpec {
  std::string repo, ref;
  std::string text() const { return repo + "@" + ref; }
};
GitSpec parse_git_spec(const std::string& text);

// FLCE_TREE_CACHE when set, else ${XDG_CACHE_HOME:-$HOME/.cache}/flce/trees.
std::string tree_cache_dir();

// `git -C repo ARGS...`, captured (process/command.hpp).
CommandResult git(const std::string& repo, const std::vector<std::string>& args);
// The 40-hex commit id REF names in REPO. Throws SubjectTreeError naming REPO@REF.
std::string resolve_commit(const std::string& repo, const std::string& ref);
// The commit's subject line (first line of its message); "" when git cannot say.
std::string commit_subject(const std::string& repo, const std::string& commit);
// `git merge-base A B` as a 40-hex id. Throws SubjectTreeError.
std::string merge_base(const std::string& repo, const std::string& a, const std::string& b);

struct SubjectTree {
  std::string repo, ref, commit, subject_line;
  std::string root;          // the exported tree (in the cache)
  std::string subject_path;  // root/<inner>; else root/src when it exists (Liger's layout); else root
  bool reused = false;       // the cache already held it
  bool partial = false;      // only src/ could be exported (the repository lacks blobs elsewhere)
};

// Exports REPO at REF (see above). `inner`: a directory inside the tree to use as the
// subject path instead of src/ or the root. `cache`: empty for tree_cache_dir().
// Throws SubjectTreeError.
SubjectTree export_subject_tree(const std::string& repo, const std::string& ref, const std::string& inner = "",
                                const std::string& cache = "");
inline SubjectTree export_subject_tree(const GitSpec& g, const std::string& inner = "") {
  return export_subject_tree(g.repo, g.ref, inner);
}

}  // namespace flce
