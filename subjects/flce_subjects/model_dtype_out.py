"""`model-dtype-out`: candidate Liger PR #1324 -- same-dtype accumulation (accum_dtype none,
fp16/bf16/fp32) through addmm(out_dtype=grad_weight.dtype, out=grad_weight) where the device
allows out_dtype. Numerically equivalent to `model` (up to rounding order); under
torch.compile it reaches aten.addmm.dtype_out and breaks where `model` does not.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-dtype-out", same_dtype_via_dtype_out=True)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
