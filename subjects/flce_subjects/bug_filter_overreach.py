"""`model-bug-filter-overreach`: planted bug: declares the gradient filter of
`model-approx-filter` (2^-6) but drops entries up to 2^-3, eight times its promise. The judge
must call it a finding (out of bounds even with the declared allowance), not an approximation.
"""
from . import approx_filter, model

CONTRACT = approx_filter.CONTRACT  # the promise stays; the code breaks it

VARIANT = model.Variant(name="model-bug-filter-overreach", grad_filter=8 * approx_filter.EPS)
flce = model.subject(VARIANT)
supports = model.supports


def version():
    return f"{model.VERSION}+{VARIANT.name}"
