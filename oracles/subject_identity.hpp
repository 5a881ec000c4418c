// Which subject a night ran: a content identity that survives exports. A tree without git or dist
// metadata (a tarball of Liger main, a copy) is named by the git tree id of its import root (the
// directory on sys.path: --subject-path, Liger's src/), computed from the files (git_object.hpp),
// so it equals `git rev-parse <commit>:src` of the commit it was exported from. Which commit that
// is comes from an identity index: a table tree id -> commits that `flce identity --index REPO`
// writes from a clone or mirror (FLCE_IDENTITY_INDEX: a file or a directory of them; default
// ${XDG_CACHE_HOME:-~/.cache}/flce/identity/). subjects/flce_subjects/identity.py is the same
// computation on the Python side, for the version strings that expectations match.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace flce {

struct IdentityIndex {
  std::string repo, path;         // the repository it was built from, and the directory hashed
  std::vector<std::string> refs;  // what was walked
  std::map<std::string, std::vector<std::string>> trees;  // tree id -> commits with it, newest first
};

// FLCE_IDENTITY_INDEX when set, else ${XDG_CACHE_HOME:-$HOME/.cache}/flce/identity.
std::string identity_index_location();

// Walks `refs` of `repo` (`git rev-list`) and records the tree of `path` at each commit.
// Throws SubjectTreeError (oracles/subject_tree.hpp) naming REPO or the ref.
IdentityIndex build_identity_index(const std::string& repo, const std::vector<std::string>& refs,
                                   const std::string& path);
// JSON, written atomically (temp + rename). Throws std::runtime_error naming the file.
void write_identity_index(const IdentityIndex& index, const std::string& file);

// Commits whose `path` tree is `tree`, over every index at `location` (a file or a directory
// of *.json; empty: identity_index_location()); unreadable tables are skipped. Newest first.
std::vector<std::string> commits_with_tree(const std::string& tree, const std::string& location = "");

struct SubjectIdentity {
  std::string kind;    // "git": an exported commit (--subject-git); "tree": a directory; "builtin": flce's own
  std::string tree;    // the import root's tree id ("" for builtin)
  std::string commit;  // the exported commit, or the index's newest match ("" none)
  std::vector<std::string> also;  // further commits with the same tree (the index's)
  std::string path;    // the directory hashed
  std::string builtin;  // kind builtin: what names it (the subject and flce's version)
  // "tree 3f2a12345678 = git ead96b618e5c", "tree 3f2a12345678 (no known commit)", "builtin model (flce 0.2.0)".
  std::string text() const;
  // What the store keys nights by: "git <40>" when a commit is known, else "tree <40>", else "builtin ...".
  std::string key() const;
};

// `commit`: --subject-git's resolved commit ("" otherwise); `builtin`: the text for a subject
// without a path. Throws GitObjectError for an unreadable tree.
SubjectIdentity identify_subject(const std::string& subject_path, const std::string& commit,
                                 const std::string& builtin, const std::string& index_location = "");

}  // namespace flce
