"""`model-bug-drop-chunk`: Planted bug: the last chunk's gradient contribution is dropped when there is >1 chunk.
max_chunk=4 makes tiny shapes (BT > 4) chunk, so the bug shows on CI-sized cases.
"""
from . import model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract

VARIANT = model.Variant(name="model-bug-drop-chunk", drop_last_chunk=True, max_chunk=4)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
