// Git's object ids computed from files on disk, without git or a repository: a subject tree
// exported without .git (a tarball, `git archive`, a copy) still names the commit it came from,
// because its directory's tree id equals `git rev-parse <commit>:<dir>` of that commit.
//   blob: sha1("blob <len>\0" + content); tree: sha1("tree <len>\0" + entries), each entry
//   "<mode> <name>\0<20-byte id>", sorted as git sorts them (a directory as "<name>/").
// Untracked build junk is skipped (never committed, yet found in used trees): __pycache__/,
// *.pyc, *.pyo, *.egg-info/, .git. Empty directories have no tree in git, so none here.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flce {

// SHA-1 of `data`, as 40 lowercase hex digits (git's object ids; not a security use).
std::string sha1_hex(std::string_view data);

// The blob id of `content` (`git hash-object`).
std::string git_blob_id(std::string_view content);

// Unreadable files or directories: the message names the path.
struct GitObjectError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The tree id of directory `dir` as git would write it (modes 100644, 100755, 120000, 40000).
// Throws GitObjectError.
std::string git_tree_id(const std::string& dir);

// Whether a directory entry is build junk the tree id skips (see above).
bool is_untracked_junk(std::string_view name, bool is_dir);

}  // namespace flce
