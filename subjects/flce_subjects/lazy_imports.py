"""Defer the body of optional packages a subject imports but its FLCE never uses.

Liger's `liger_kernel.utils` starts with `try: import peft` to set PEFT_AVAILABLE, and on a
machine with peft installed that import pulls in transformers, scikit-learn and scipy: 3.75 of
the 4.9 s a worker spent importing Liger on the GPU box (python -X importtime, BENCHMARKS.md),
before its first case. With the package's module made lazy (importlib.util.LazyLoader),
`import peft` still succeeds where peft is installed and still fails where it is not, so the
subject sees the same PEFT_AVAILABLE; the package's own code runs on first attribute access
(never, on the FLCE path).

FLCE_LAZY_IMPORTS overrides a subject's list: "none" imports everything eagerly, otherwise a
comma-separated list of top-level package names.
"""
import importlib.abc
import importlib.util
import os
import sys

ENV = "FLCE_LAZY_IMPORTS"


def names(default):
    """The top-level packages to defer: FLCE_LAZY_IMPORTS if set, else the subject's default."""
    raw = os.environ.get(ENV)
    if raw is None:
        return tuple(default)
    raw = raw.strip()
    if raw in ("", "none"):
        return ()
    return tuple(n.strip() for n in raw.split(",") if n.strip())


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds the deferred names with the other finders, then wraps their loader."""

    def __init__(self, deferred):
        self.deferred = frozenset(deferred)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.deferred:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec  # namespace or legacy loader: imported as usual
            spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        return None  # not installed: the import fails as it would without us


def defer(packages):
    """Make the given top-level packages lazy for imports from now on (idempotent). Returns
    the names deferred; those already imported are left as they are."""
    wanted = tuple(p for p in packages if p not in sys.modules)
    have = [f for f in sys.meta_path if isinstance(f, _LazyFinder)]
    if have:
        wanted = tuple(p for p in wanted if p not in have[0].deferred)
        if wanted:
            have[0].deferred = have[0].deferred | frozenset(wanted)
        return wanted
    if wanted:
        sys.meta_path.insert(0, _LazyFinder(wanted))
    return wanted


def deferred():
    """The names this process defers (for describe()/environment reports)."""
    for f in sys.meta_path:
        if isinstance(f, _LazyFinder):
            return sorted(f.deferred)
    return []
