"""`unsloth`: Unsloth's fused LM-head loss, `fused_linear_cross_entropy` of
unsloth_zoo.fused_losses.fused_linear (unsloth_zoo pinned in requirements-nodeps.txt, installed
without its dependencies).

The package's `__init__` refuses to import without the whole Unsloth stack ("Please install
Unsloth via `pip install unsloth`!"), but fused_linear.py itself needs only torch: this subject
loads that one file from the installed distribution, once per process (it registers
torch.library ops under fixed names, `unsloth_zoo::fused_linear_ce_v2`, which cannot be
registered twice).

Its contract is what the function documents: "sum(CE(hidden @ weight.T + bias, targets)) /
divisor over rows whose target != ignore_index, float32 scalar ... A zero or missing divisor
... counts as 1". So an all-ignored mean is 0 and the loss fp32: flce's `liger` semantics. The
mapping onto its API:
  * reduction "mean" -> divisor = the count of targets != ignore_index (what its trainer
    passes as num_items_in_batch), "sum" -> divisor 1; "none" is not expressible;
  * softcap -> logit_softcapping (`cap * tanh(x / cap)`), label_smoothing as is (torch's
    form: `(1 - eps) nll + eps (lse - mean_j z_j)`), bias -> bias;
  * accum_dtype fp32 -> fp32_head_grad=True: the weight gradient is accumulated across row
    chunks in fp32 and rounded once (without it, in the weight dtype, which flce's bounds for
    accum_dtype none assume).
Not expressible (unsupported): class weights, z-loss, token scaling, accuracy, predicted tokens.
"""
import importlib.metadata
import importlib.util
import sys

import torch

from . import paths
from .model import supports_flce_only

DIST = "unsloth_zoo"
FILE = "unsloth_zoo/fused_losses/fused_linear.py"

CONTRACT = {
    "semantics": "liger",
    "params": ["bias", "ignore_index", "label_smoothing", "reduction", "softcap", "accum_dtype"],
    "source": "unsloth_zoo.fused_losses.fused_linear.fused_linear_cross_entropy docstring: 'sum(CE(hidden @ "
              "weight.T + bias, targets)) / divisor over rows whose target != ignore_index, float32 scalar'; "
              "a zero divisor counts as 1",
}

_UNSUPPORTED = (
    ("ce_weight", lambda v: v, "class weights (ce_weight)"),
    ("return_z_loss", lambda v: v, "z-loss (return_z_loss)"),
    ("lse_square_scale", lambda v: v, "z-loss (lse_square_scale)"),
    ("use_token_scaling", lambda v: v, "token scaling"),
    ("return_token_accuracy", lambda v: v, "token accuracy"),
    ("return_predicted_tokens", lambda v: v, "predicted tokens"),
    ("reduction", lambda v: v == "none", "reduction none (it returns sum / divisor)"),
)

_NAME = "flce_unsloth_fused_linear"
_module = None


def _lib():
    """fused_linear.py of the installed unsloth_zoo, loaded alone (None if not installed)."""
    global _module
    if _module is None:
        try:
            path = importlib.metadata.distribution(DIST).locate_file(FILE)
        except importlib.metadata.PackageNotFoundError:
            return None
        spec = importlib.util.spec_from_file_location(_NAME, str(path))
        module = importlib.util.module_from_spec(spec)
        # In sys.modules before it runs: Dynamo re-imports a traced function's module by name
        # (without it, every compiled case failed with ModuleNotFoundError: flce's harness).
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
        _module = module
    return _module


def version():
    try:
        return f"unsloth_zoo {importlib.metadata.version(DIST)} fused_linear_cross_entropy"
    except importlib.metadata.PackageNotFoundError:
        return "unsloth_zoo (not installed)"


def supports(case):
    reason = supports_flce_only(case)
    if reason:
        return reason
    for field, present, what in _UNSUPPORTED:
        if present(case.get(field)):
            return f"option {what} not supported by unsloth"
    if _lib() is None:
        return "unsloth_zoo is not installed here"
    return None


def flce(x, w, target, *, bias=None, ignore_index=-100, label_smoothing=0.0, reduction="mean", softcap=None,
         accum_dtype=None):
    if reduction not in ("mean", "sum"):
        raise NotImplementedError("unsloth: reduction none is not expressible (see supports())")
    divisor = (target != ignore_index).sum() if reduction == "mean" else 1.0
    paths.note("cuda" if x.is_cuda else "cpu")
    loss = _lib().fused_linear_cross_entropy(
        x, w, bias, target, divisor=divisor, ignore_index=ignore_index, label_smoothing=label_smoothing,
        logit_softcapping=float(softcap or 0.0), fp32_head_grad=accum_dtype == torch.float32)
    return loss, None, None, None
