"""`model-bug-two-causes`: two planted bugs in one output: grad_weight is twice as large under
softcap, and twice as large under label smoothing (two causes, one output: a campaign must report
two findings, each naming its flag).
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-two-causes", gw_scale_softcap=2.0, gw_scale_smoothing=2.0)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
