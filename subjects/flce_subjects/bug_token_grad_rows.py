"""`model-bug-token-grad-rows`: Planted bug: under reduction="none" the per-token upstream
gradient is applied one row off (rolled by one), so grad_input/grad_weight/grad_bias are
wrong only when reduction is none and the upstream gradient is not uniform.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-token-grad-rows", token_grad_shift=True)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
