"""`model-bug-input-no-grad`: Planted bug: the chunk loop writes grad_input whenever any
gradient is wanted, so an input that does not require grad (while weight or bias does)
raises TypeError ('NoneType' object does not support item assignment).
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-input-no-grad", grad_input_unguarded=True)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
