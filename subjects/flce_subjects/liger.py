"""`liger`: Liger-Kernel's liger_fused_linear_cross_entropy (Triton: needs a CUDA GPU).

liger_kernel is imported lazily, by supports(), which the runner calls before every run
and outside any traced region, so that the registry can swap the source tree (subject_path)
between calls. flce() itself only reads the bound function: it runs inside torch.compile,
where importlib.import_module is a function Dynamo skips, so under fullgraph=True an import
there fails with "Attempted to call function marked as skipped" - a harness error, not the
subject's (a GPU campaign reported it as a Liger finding before this was fixed).

Versions: flce() forwards what the runner binds from callee()'s signature (params.py), so a
tree that lacks a parameter (0.5.x: accum_dtype, use_token_scaling, return_token_accuracy,
return_predicted_tokens; 0.6.2-0.7.x: return_predicted_tokens) still runs every case that does
not use it; a case that does is "unsupported-by-subject:<param>". What it returns varies too
(a plain loss; (loss, z_loss) up to 0.6.2; CrossEntropyOutput after): the runner takes all.
"""
import importlib
import os
import re
import sys

import torch

from .model import supports_flce_only

WRAPS = "liger_kernel"
# What Liger-Kernel documents and its kernel does (contract.py): an all-ignored mean is 0 (its
# kernel divides by max(n_non_ignore, 1)) and the loss is fp32 whatever the input dtype.
CONTRACT = {"semantics": "liger",
            "source": "Liger-Kernel fused_linear_cross_entropy: loss in fp32, all-ignored mean 0"}


_bound = None  # liger_fused_linear_cross_entropy of the tree supports() last loaded


def _functional():
    return importlib.import_module("liger_kernel.transformers.functional")


def version():
    """The liger_kernel that loaded, named as a user would (source_of has the forms)."""
    try:
        where = importlib.import_module("liger_kernel").__file__
    except Exception as e:  # still report something useful when the import is broken
        return f"liger-kernel unknown (<import failed: {type(e).__name__}>)"
    return source_of(where)


def source_of(where, search=None, index=None):
    """How a user names the copy of liger_kernel at `where` (its __init__.py); expectations match
    on it (corpus/README.md, subject_version), so the leading words are stable:
      "liger-kernel git <12 hex>, a tree flce exported (<file>)": --subject-git's <40 hex>/ trees;
      "liger-kernel 0.8.5, installed release (<file>)": an installed distribution owns the file;
      "liger-kernel git <12 hex>, source tree at <root>, tree <12 hex> (<file>)": any other tree
      whose content identity (identity.py: the git tree id of its src/, from the files) an identity
      index names a commit for, so a plain export of a commit matches that commit's pins;
      "liger-kernel source tree at <root>, pyproject.toml version 0.8.6, tree <12 hex> (<file>)"
      (or "..., version unknown, ..."): any other tree (a --subject-path checkout), whose version
      may be ahead of its release and whose installed metadata, if any, is another copy's, so it
      never reads "liger-kernel <release>". `search`: the metadata path (default sys.path);
      `index`: the identity index location (default FLCE_IDENTITY_INDEX or the box cache)."""
    tree = re.search(r"/([0-9a-f]{40})/", where)
    if tree:
        return f"liger-kernel git {tree.group(1)[:12]}, a tree flce exported ({where})"
    release = _owning_release(where, search)
    if release:
        return f"liger-kernel {release}, installed release ({where})"
    root, own = _tree_version(where)
    tree_id, commits = _identity(where, index)
    if commits:
        same = "".join(f", the same tree as liger-kernel git {c[:12]}" for c in commits[1:5])
        return f"liger-kernel git {commits[0][:12]}, source tree at {root}, tree {tree_id[:12]}{same} ({where})"
    return f"liger-kernel source tree at {root}, {own}, tree {tree_id[:12]} ({where})"


def _identity(where, index):
    """(tree id of the import root holding the package, commits an index names for it)."""
    from . import identity

    import_root = os.path.dirname(os.path.dirname(where))
    try:
        if index is None:
            return identity.identify(import_root)
        t = identity.tree_id(import_root)
        return t, identity.commits_with_tree(t, index)
    except OSError as e:  # an unreadable file: the tree has no identity, the rest still reads
        return f"unknown ({type(e).__name__})", []


def _owning_release(where, search):
    """The version of the installed liger-kernel distribution that holds this very file, if any
    (an editable install's metadata points elsewhere: a tree, not a release)."""
    from importlib import metadata

    real = os.path.realpath(where)
    try:
        for dist in metadata.distributions(name="liger-kernel", path=search if search is not None else sys.path):
            if os.path.realpath(str(dist.locate_file("liger_kernel/__init__.py"))) == real:
                return dist.version
    except Exception:  # unreadable metadata: not a release we can name
        return None
    return None


def _tree_version(where):
    """(the tree's root, what its pyproject.toml says of the version): Liger's layout is
    <root>/src/liger_kernel/, with pyproject.toml at <root>."""
    package_parent = os.path.dirname(os.path.dirname(where))
    root = os.path.dirname(package_parent) if os.path.basename(package_parent) == "src" else package_parent
    try:
        import tomllib  # Python 3.11+; older interpreters say "version unknown"

        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            v = tomllib.load(f).get("project", {}).get("version")
    except (ImportError, OSError, ValueError):
        v = None
    return root, (f"pyproject.toml version {v}" if isinstance(v, str) and v else "version unknown")


def supports(case):
    reason = supports_flce_only(case)
    if reason:
        return reason
    if case.get("device") != "cuda" or not torch.cuda.is_available():
        return "liger needs CUDA (its kernels are Triton GPU kernels)"
    global _bound
    try:
        _bound = _functional().liger_fused_linear_cross_entropy
    except Exception as e:
        return f"cannot import liger_kernel: {type(e).__name__}: {e}"
    return None


def callee():
    """The function flce() forwards to, of the tree the registry selected: its signature says
    which parameters this version takes (read outside any traced region)."""
    return _functional().liger_fused_linear_cross_entropy


def flce(x, w, target, *args, **kwargs):
    fn = _bound if _bound is not None else _functional().liger_fused_linear_cross_entropy
    return fn(x, w, target, *args, **kwargs)
