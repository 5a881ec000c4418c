"""`cce`: Apple's cut-cross-entropy (`pip install cut-cross-entropy`, pinned in
requirements-nodeps.txt), `linear_cross_entropy(e, c, targets, ...)`.

Which implementation runs is the library's own split: impl="cce" (its Triton kernels) on
CUDA, impl="torch_compile" (its torch.compile'd reference) on CPU. Exact: filter_eps=None,
so no gradient entry is filtered; the library's default filtering is an approximation on
purpose and is not what this subject judges.

Its contract is what cut-cross-entropy documents: it "computes
`F.cross_entropy((e @ c.T).float(), targets)`" -- torch's semantics over fp32 logits
(flce's `torch-fp32`: an all-ignored mean is NaN, the loss fp32). Parameters: ignore_index,
reduction, softcap (`tanh(logits / softcap) * softcap`, as Liger's). No bias, class weights,
smoothing, z-loss or accumulation option. By-design limit: the CUDA backward asserts
"Backwards requires embeddings to be bf16 or fp16" (cce_backward.py), so fp32 embeddings on
CUDA, and fp32 storage under autocast there, are unsupported-by-subject.
"""
import contextlib

import torch

from . import paths
from .dtypes import of as dtype_of
from .model import supports_flce_only

CONTRACT = {
    "semantics": "torch-fp32",
    "params": ["ignore_index", "reduction", "softcap"],
    "source": "cut_cross_entropy.linear_cross_entropy docstring: 'computes F.cross_entropy((e @ c.T).float(), "
              "targets)'; filter_eps=None (exact)",
}


def _lib():
    try:
        import cut_cross_entropy
    except ImportError:
        return None
    return cut_cross_entropy


def version():
    lib = _lib()
    if lib is None:
        return "cut-cross-entropy (not installed)"
    from importlib.metadata import version as dist_version
    return f"cut-cross-entropy {dist_version('cut-cross-entropy')}"


def supports(case):
    reason = supports_flce_only(case)
    if reason:
        return reason
    if _lib() is None:
        return "cut-cross-entropy is not installed here"
    if case.get("device") == "cuda":
        fp32_embeddings = case.get("autocast", "none") != "none" or dtype_of(case["input_dtype"]) == torch.float32
        if fp32_embeddings:
            return "cce backward requires bf16 or fp16 embeddings (an assertion in cce_backward.py)"
    return None


def _recompile_room():
    """impl="torch_compile" is one torch.compile'd function per process, specialised on the
    dtype, reduction, ignore_index and softcap value: a worker's stream of cases recompiles it
    past dynamo's default limit of 8 (then it fails, or falls back to eager). That is the
    harness's reuse of one process, not the library: give it room, as compiled.py does."""
    cfg = torch._dynamo.config
    wanted = {"recompile_limit": max(getattr(cfg, "recompile_limit", 0), 1 << 16),
              "accumulated_recompile_limit": max(getattr(cfg, "accumulated_recompile_limit", 0), 1 << 16)}
    return cfg.patch(**{k: v for k, v in wanted.items() if hasattr(cfg, k)})


def calling(filter_eps):
    """The subject's callable with this filter_eps (None: exact; "high": the library default)."""
    def flce(x, w, target, *, ignore_index=-100, reduction="mean", softcap=None):
        impl = "cce" if x.is_cuda else "torch_compile"
        paths.note(impl)
        # Under the harness's torch.compile the call is traced, and a config patch there is a
        # call dynamo skips (fullgraph: an error of flce's, not the library's); the harness
        # gives a compiled call its room itself (compiled.py).
        with contextlib.nullcontext() if torch.compiler.is_compiling() else _recompile_room():
            loss = _lib().linear_cross_entropy(x, w, target, ignore_index=ignore_index, softcap=softcap,
                                               reduction=reduction, filter_eps=filter_eps, impl=impl)
        return loss, None, None, None
    return flce


flce = calling(None)
