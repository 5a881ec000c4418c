"""`torch-native`: torch.nn.functional.linear_cross_entropy (torch >= 2.13).

Mapping of the case onto its API (checked against torch 2.13's signature):
  * label_smoothing == 0 -> the chunked path, options=LinearCrossEntropyOptions(acc_dtype=A)
    with A = accum_dtype, or None when accum_dtype is none: torch's own default, resolved at
    call time (fp32 for fp16/bf16 on CPU). flce's bounds for "none" assume accumulation in the
    parameter dtype, which covers whatever torch picks;
  * label_smoothing > 0 -> options=None, the reference path (linear + cross_entropy): the
    chunked path does not implement smoothing and would fall back with a warning anyway;
  * bias -> linear_bias, ce_weight -> weight, ignore_index/reduction as is.
Not expressible (reported unsupported): z-loss, softcap, token scaling, token accuracy,
predicted tokens, and ce_weight on the reference path (label smoothing, or every case of
torch-native-reference) with fp16/bf16 logits: that path requires the class weight in the
logits dtype; the case's ce_weight is fp32.
Its contract (CONTRACT, contract.py) is torch's semantics: the function documents itself as
`cross_entropy(linear(input, linear_weight), target, ...)`, so an all-ignored mean is NaN and
the loss comes in the logits' dtype.
"""
import torch

from . import paths
from .dtypes import of as dtype_of
from .model import supports_flce_only

_UNSUPPORTED_OPTIONS = (
    ("return_z_loss", lambda v: v, "z-loss (return_z_loss)"),
    ("lse_square_scale", lambda v: v, "z-loss (lse_square_scale)"),
    ("softcap", lambda v: v is not None, "softcap"),
    ("use_token_scaling", lambda v: v, "token scaling"),
    ("return_token_accuracy", lambda v: v, "token accuracy"),
    ("return_predicted_tokens", lambda v: v, "predicted tokens"),
)


CONTRACT = {
    "semantics": "torch",
    "params": ["bias", "ce_weight", "ignore_index", "label_smoothing", "reduction", "accum_dtype"],
    "source": "torch.nn.functional.linear_cross_entropy: 'equivalent to cross_entropy(linear(input, "
              "linear_weight), target)'; chunked weight/bias gradients as bulk + correction "
              "(torch/nn/modules/linear_cross_entropy.py, _ChunkContext)",
    # The chunked path accumulates grad_weight (and grad_bias) as the softmax-weighted bulk
    # P^T X and subtracts the target rows apart ("bulk + correction" in its source): in acc_dtype
    # the two terms round apart (MATH.md item 12). Its grad_input forms G first.
    "grad_weight_form": "split",
}


def _api():
    return getattr(torch.nn.functional, "linear_cross_entropy", None)


def version():
    return f"torch {torch.__version__} F.linear_cross_entropy"


def supports(case, reference=False):
    """Why torch-native cannot run `case` (None if it can); `reference`: every case on the
    reference path (torch-native-reference), not only the label-smoothing ones."""
    reason = supports_flce_only(case)
    if reason:
        return reason
    if _api() is None or not hasattr(torch.nn, "LinearCrossEntropyOptions"):
        return f"this torch ({torch.__version__}) has no linear_cross_entropy"
    for field, present, what in _UNSUPPORTED_OPTIONS:
        if present(case.get(field)):
            return f"option {what} not supported by torch-native"
    low_logits = case.get("autocast", "none") != "none" or dtype_of(case["input_dtype"]) != torch.float32
    # The reference path's cross_entropy wants the class weight in the logits' dtype (the chunked
    # path accepts fp32); the case's ce_weight is fp32.
    if case.get("ce_weight") and low_logits and reference:
        return "option ce_weight not supported by the reference path with fp16/bf16 logits (weight dtype must match)"
    if case.get("ce_weight") and case.get("label_smoothing", 0) > 0 and low_logits:
        return "option label_smoothing+ce_weight not supported by torch-native with fp16/bf16 logits"
    return None


def calling(acc_policy="auto", batch_chunk_size=None, reference=False):
    """flce() for one path of F.linear_cross_entropy: the chunked path with these options
    (torch's defaults: acc_policy and chunking "auto"), or the reference path for every case."""

    def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0,
             label_smoothing=0.0, reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None,
             use_token_scaling=False, return_token_accuracy=False, return_predicted_tokens=False):
        if return_z_loss or lse_square_scale or softcap is not None or use_token_scaling \
                or return_token_accuracy or return_predicted_tokens:
            raise NotImplementedError("torch-native: option not expressible (see supports())")
        options = None
        if label_smoothing == 0 and not reference:
            chunking = {} if batch_chunk_size is None else {"batch_chunk_size": batch_chunk_size,
                                                            "chunking_method": None}
            options = torch.nn.LinearCrossEntropyOptions(acc_dtype=accum_dtype, acc_policy=acc_policy, **chunking)
            paths.note("chunked")
        else:
            paths.note("reference")
        loss = _api()(x, w, target, linear_bias=bias, weight=ce_weight, reduction=reduction,
                      ignore_index=ignore_index, label_smoothing=label_smoothing, options=options)
        return loss, None, None, None

    return flce


flce = calling()
