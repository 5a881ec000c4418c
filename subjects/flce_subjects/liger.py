"""`liger`: Liger-Kernel's liger_fused_linear_cross_entropy (Triton: needs a CUDA GPU).

liger_kernel is imported lazily, by supports(), which the runner calls before every run
and outside any traced region, so that the registry can swap the source tree (subject_path)
between calls. flce() itself only reads the bound function: it runs inside torch.compile,
where importlib.import_module is a function Dynamo skips, so under fullgraph=True an import
there fails with "Attempted to call function marked as skipped" - a harness error, not the
subject's (a GPU campaign reported it as a Liger finding before this was fixed).
"""
import importlib

import torch

from .model import supports_flce_only

WRAPS = "liger_kernel"


_bound = None  # liger_fused_linear_cross_entropy of the tree supports() last loaded


def _functional():
    return importlib.import_module("liger_kernel.transformers.functional")


def version():
    try:
        from importlib.metadata import version as dist_version

        v = dist_version("liger-kernel")
    except Exception:
        v = "unknown"
    try:
        where = importlib.import_module("liger_kernel").__file__
    except Exception as e:  # still report something useful when the import is broken
        where = f"<import failed: {type(e).__name__}>"
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


def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0,
         label_smoothing=0.0, reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None,
         use_token_scaling=False, return_token_accuracy=False, return_predicted_tokens=False):
    fn = _bound if _bound is not None else _functional().liger_fused_linear_cross_entropy
    out = fn(
        x, w, target, bias=bias, ce_weight=ce_weight, ignore_index=ignore_index,
        lse_square_scale=lse_square_scale, label_smoothing=label_smoothing, reduction=reduction,
        softcap=softcap, return_z_loss=return_z_loss, accum_dtype=accum_dtype,
        use_token_scaling=use_token_scaling, return_token_accuracy=return_token_accuracy,
        return_predicted_tokens=return_predicted_tokens,
    )
    if isinstance(out, torch.Tensor):  # plain loss when no extras are requested
        return out, None, None, None
    return out.loss, out.z_loss, out.token_accuracy, out.predicted_tokens
