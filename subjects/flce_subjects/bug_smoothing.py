"""`model-bug-smoothing`: Planted bug: the label-smoothing term is counted twice (loss and gradient,
consistently), i.e. (1 - ls) * nll + 2 * ls * smooth.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-smoothing", smoothing_scale=2.0)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
