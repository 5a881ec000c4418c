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
import re

import torch

from .model import supports_flce_only

WRAPS = "liger_kernel"


_bound = None  # liger_fused_linear_cross_entropy of the tree supports() last loaded


def _functional():
    return importlib.import_module("liger_kernel.transformers.functional")


def version():
    """"liger-kernel 0.8.5 (<file>)" for an installed release; "liger-kernel git <12 hex> (<file>)"
    for a tree flce exported (--subject-git: .../trees/<40 hex>/), whose installed metadata, if
    any, belongs to another copy. Expectations match on it (corpus/README.md, subject_version)."""
    try:
        where = importlib.import_module("liger_kernel").__file__
    except Exception as e:  # still report something useful when the import is broken
        where = f"<import failed: {type(e).__name__}>"
    tree = re.search(r"/trees/([0-9a-f]{40})/", where)
    if tree:
        return f"liger-kernel git {tree.group(1)[:12]} ({where})"
    try:
        from importlib.metadata import version as dist_version

        v = dist_version("liger-kernel")
    except Exception:
        v = "unknown"
    return f"liger-kernel {v} ({where})"


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
