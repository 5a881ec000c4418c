"""`model-bug-autocast-no-bias`: Planted bug: under autocast with no bias, grad_input is
computed as torch.mm(grad_logits, weight) with autocast disabled, so the bf16/fp16 logits
gradient meets the fp32 weight: RuntimeError "expected m1 and m2 to have the same dtype"
(signature amp-mat-dtype-mismatch), as Liger's AMP no-bias failures raise.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-autocast-no-bias", amp_no_bias_mm_fp32=True)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
