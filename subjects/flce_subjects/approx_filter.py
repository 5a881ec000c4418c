"""`model-approx-filter`: the model with a gradient filter it declares (contract `approximation`):
entries with |softmax - onehot| < 2^-6 are dropped from the backward, entry by entry. A test
fixture for declared approximations: every case passes or is an approximation within its
tolerance (judge/MATH.md, "Declared approximations"), never a finding. 2^-6, far above
cut-cross-entropy's 2^-12, so that the filter shows on CPU-sized cases in every dtype.
"""
from . import model

EPS = 2.0 ** -6
CONTRACT = dict(model.CONTRACT, approximation={"name": "grad_filter", "eps": {"bf16": EPS, "fp16": EPS, "fp32": EPS},
                                               "source": "flce's fixture: drops |p - onehot| < 2^-6"})

VARIANT = model.Variant(name="model-approx-filter", grad_filter=EPS)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
