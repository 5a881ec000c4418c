"""A source tree's content identity: the git tree id of a directory, computed from its files
without git (oracles/git_object.hpp is the same computation in C++), and the commits an identity
index names for it (`flce identity --index REPO` writes the index; FLCE_IDENTITY_INDEX: a file or
a directory of them, default ${XDG_CACHE_HOME:-~/.cache}/flce/identity).

So a plain export of a commit (a tarball, a copy, no .git, no dist-info) still reads
"liger-kernel git <12 hex>" in version strings, and the pins of corpus/expectations.json that
name that commit match it.
"""
import functools
import hashlib
import json
import os
import stat

# Never committed, yet found in used trees (oracles/git_object.cpp skips the same).
_JUNK_DIRS = ("__pycache__", ".git")


def _junk(name, is_dir):
    if is_dir:
        return name in _JUNK_DIRS or name.endswith(".egg-info")
    return name.endswith((".pyc", ".pyo")) or name == ".git"


def _object(kind, body):
    return hashlib.sha1(b"%s %d\0" % (kind, len(body)) + body).digest()


def _tree(path):
    """The tree's binary id, or None when git would keep nothing of it (no files under it)."""
    entries = []
    for name in os.listdir(path):
        p = os.path.join(path, name)
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            if not _junk(name, False):
                entries.append((name, b"120000", name, _object(b"blob", os.fsencode(os.readlink(p)))))
        elif stat.S_ISDIR(st.st_mode):
            if not _junk(name, True):
                sub = _tree(p)
                if sub is not None:
                    entries.append((name + "/", b"40000", name, sub))
        elif stat.S_ISREG(st.st_mode) and not _junk(name, False):
            with open(p, "rb") as f:
                blob = _object(b"blob", f.read())
            entries.append((name, b"100755" if st.st_mode & stat.S_IXUSR else b"100644", name, blob))
    if not entries:
        return None
    entries.sort(key=lambda e: os.fsencode(e[0]))
    body = b"".join(mode + b" " + os.fsencode(name) + b"\0" + oid for _, mode, name, oid in entries)
    return _object(b"tree", body)


def tree_id(path):
    """The 40-hex git tree id of directory `path` (git's empty tree when it holds nothing)."""
    t = _tree(path)
    return (t or _object(b"tree", b"")).hex()


def _index_location():
    v = os.environ.get("FLCE_IDENTITY_INDEX")
    if v:
        return v
    home = os.environ.get("HOME")
    base = os.environ.get("XDG_CACHE_HOME") or (os.path.join(home, ".cache") if home else "")
    return os.path.join(base, "flce", "identity") if base else ""


def commits_with_tree(tree, location=None):
    """Commits (40 hex, newest first) whose indexed directory had this tree, over every index."""
    location = _index_location() if location is None else location
    if not location:
        return []
    files = sorted(os.path.join(location, f) for f in os.listdir(location) if f.endswith(".json")) \
        if os.path.isdir(location) else [location]
    out = []
    for f in files:
        try:
            with open(f) as fh:
                j = json.load(fh)
        except (OSError, ValueError):
            continue  # an unreadable table names nothing
        if not isinstance(j, dict) or j.get("format") != "flce-identity-index/1":
            continue
        for c in (j.get("trees") or {}).get(tree, []):
            if isinstance(c, str) and len(c) == 40 and c not in out:
                out.append(c)
    return out


@functools.lru_cache(maxsize=16)
def identify(root):
    """(tree id, [commits]) of an import root; cached per process (a host loads one tree)."""
    t = tree_id(root)
    return t, commits_with_tree(t)
