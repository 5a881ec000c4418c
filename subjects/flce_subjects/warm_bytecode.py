"""Fills flce's bytecode cache with what a first compile imports, once per torch and interpreter.

    python -m flce_subjects.warm_bytecode      (the zygote starts it; see maybe_start)

Why: where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as on the GPU box, whose torch
ships without __pycache__) flce keeps it under one prefix (process/bytecode_cache.cpp), and a
box's first campaign compiled the compile stack's sources in its first compiled call: 3.0 s
there against 1.2 s once cached (docs/benchmarks-history.md, "Where a worker's start-up goes"), most of the
gap to the seed's tier 1 on a fresh box. The zygote starts this right after its own
`import torch`, so the stack's bytecode is written on another core while the zygote imports
the subject; the first compiled call then reads it. It only imports and compiles a toy
function with the aot_eager backend on CPU: no CUDA, no Inductor code generation, no case.

A marker under the prefix (torch version and interpreter tag) says it was done; a lock file
keeps ten campaigns starting at once on a fresh box to one warm-up.
"""
import importlib
import os
import sys
import time

# What a compiled call imports beyond `import torch` and the subject's own imports (torch 2.11
# with Inductor on CUDA). A name a torch version lacks is skipped.
MODULES = (
    "torch._dynamo",
    "torch._functorch.aot_autograd",
    "torch._functorch.partitioners",
    "torch._inductor.compile_fx",
    "torch._inductor.lowering",
    "torch._inductor.graph",
    "torch._inductor.scheduler",
    "torch._inductor.select_algorithm",
    "torch._inductor.kernel.mm",
    "torch._inductor.fx_passes.post_grad",
    "torch._inductor.fx_passes.joint_graph",
    "torch._inductor.codegen.triton",
    "torch._inductor.codegen.wrapper",
    "torch._inductor.runtime.triton_heuristics",
    "torch._inductor.async_compile",
    "networkx",
)
STALE_LOCK_S = 900  # a lock older than this is a warm-up that died


def marker_path(prefix, torch_version, tag=None):
    tag = tag or sys.implementation.cache_tag
    return os.path.join(prefix, f"flce-warm-{torch_version}-{tag}")


def _take_lock(lock):
    """True if this process may warm: it created the lock, or the one there is stale."""
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            try:
                if time.time() - os.path.getmtime(lock) < STALE_LOCK_S:
                    return False
                os.unlink(lock)
            except OSError:
                return False
        except OSError:
            return False
    return False


def maybe_start(torch_version, prefix=None, popen=None, dont_write=None):
    """From the zygote, after `import torch`: starts the warm-up where flce's bytecode prefix is
    in use and its marker is absent; returns the process, or None (nothing to do, or already
    running). The zygote reaps it like any child; it dies with the zygote."""
    prefix = prefix if prefix is not None else sys.pycache_prefix
    dont_write = sys.dont_write_bytecode if dont_write is None else dont_write
    marker = marker_path(prefix, torch_version) if prefix else ""
    if not prefix or dont_write or os.path.exists(marker):
        return None
    lock = marker + ".lock"
    try:
        os.makedirs(prefix, exist_ok=True)  # Python makes it only when it first writes there
    except OSError:
        return None
    if not _take_lock(lock):
        return None
    import subprocess

    popen = popen or subprocess.Popen
    try:
        return popen([sys.executable, "-m", "flce_subjects.warm_bytecode", lock], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        os.unlink(lock)
        return None


def _toy_compile(torch):
    """Dynamo, AOTAutograd and the partitioner (networkx) through a backward, on CPU."""
    x = torch.randn(4, 4, requires_grad=True)
    fn = torch.compile(lambda t: (t.sin() @ t.T).logsumexp(-1).sum(), backend="aot_eager")
    fn(x).backward()


def warm(torch):
    """Imports MODULES (writing their bytecode under the prefix), then compiles a toy."""
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 -- another torch version's layout: skip the name
            continue
    _toy_compile(torch)


def main(argv):
    from .subprocess_worker import _die_with_parent

    _die_with_parent()
    lock = argv[1] if len(argv) > 1 else None
    try:
        os.nice(10)  # behind the zygote and the workers where cores are short
        import torch

        warm(torch)
        if lock:
            with open(lock[: -len(".lock")], "w") as f:
                f.write(f"torch {torch.__version__}\n")
        return 0
    finally:
        if lock:
            try:
                os.unlink(lock)
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
