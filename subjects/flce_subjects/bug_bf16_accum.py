"""`model-bug-bf16-accum`: Planted bug: an fp32 grad_weight accumulator (accum_dtype fp32,
or fp32 weights under autocast) is silently kept in the fp16/bf16 logits dtype, then
returned as fp32.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-bf16-accum", accum_in_logits_dtype=True)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
