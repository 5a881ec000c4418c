"""A subject's contract: what the implementation promises, declared once on its Python side and
read by flce before anything is sampled (issue #39).

A subject module (or plug-in object) declares `CONTRACT`, a dict, or `contract()` returning one:

  semantics  (required) "liger" | "torch" | "torch-fp32" (case/case.hpp Semantics, judge/MATH.md):
             the value of an all-ignored mean and the dtype of the loss, as the implementation
             documents them. flce samples every case with these semantics and judges by them.
  params     FLCE parameters the implementation supports (params.PARAMS names); the others are
             never drawn. Default: whatever its callable's signature takes.
  dtypes     input dtypes it supports ("bf16", "fp16", "fp32"); default all three.
  source     where the contract comes from: the documentation or the reference path it follows.
  approximation
             a documented approximation, judged against its own derived tolerance (judge/MATH.md,
             "Declared approximations") and reported apart, never as a pass or a finding. flce
             derives one kind: {"name": "grad_filter", "eps": {"bf16": e, ...}, "source": "..."}:
             gradient entries (i, j) with |softmax_ij - onehot_ij| < eps (per input dtype) may be
             dropped, as cut-cross-entropy's filter_eps does; "devices": ["cuda"] where only that
             device's path filters (its other paths are then judged exact).
  grad_weight_form
             "fused" (default): grad_weight and grad_bias contract G = softmax - onehot, formed
             first; "split": the softmax term and the target term are contracted and rounded
             apart and then subtracted (torch's chunked path: "bulk + correction"), so their
             rounding scales with |softmax| + |onehot| (judge/MATH.md item 12). Declare it only
             where the implementation's code or documentation says so.
  softmax_dtype
             where the softmax lives: "fp32" (default), "logits" (the shifted logits, their
             exponentials and their sum stored in the logits dtype), or "acc" (in the
             accumulation dtype: the logits dtype when the case's accum_dtype is none, else
             fp32); judge/MATH.md item 13.

A contract is what the implementation documents and what its own reference path does, never
what its output happens to be. By-design limits beyond these (an option pair it refuses) stay in
`supports(case)`, whose reason becomes `unsupported-by-subject:<why>`, never a finding.
A plug-in without a contract is judged under Liger's semantics, and flce's reports say so.
"""
from . import params

SEMANTICS = ("liger", "torch", "torch-fp32")
DTYPES = ("bf16", "fp16", "fp32")
FIELDS = ("semantics", "params", "dtypes", "source", "approximation", "grad_weight_form", "softmax_dtype")
GRAD_WEIGHT_FORMS = ("fused", "split")
SOFTMAX_DTYPES = ("fp32", "acc", "logits")
APPROXIMATIONS = ("grad_filter",)


class ContractError(ValueError):
    """A declared contract that breaks a rule; the message names the field."""


def of(obj, module):
    """The declared contract of a subject (object first, then its module), or None."""
    for holder in (obj, module):
        declared = getattr(holder, "contract", None)
        if callable(declared):
            return check(declared())
        declared = getattr(holder, "CONTRACT", None)
        if declared is not None:
            return check(declared)
    return None


def check(c):
    """The contract itself, or ContractError naming the first broken rule by field."""
    if not isinstance(c, dict):
        raise ContractError(f"contract: must be a dict, got {type(c).__name__}")
    for key in c:
        if key not in FIELDS:
            raise ContractError(f"contract.{key}: unknown field (known: {', '.join(FIELDS)})")
    if c.get("semantics") not in SEMANTICS:
        raise ContractError(f"contract.semantics: must be one of {', '.join(SEMANTICS)}, got {c.get('semantics')!r}")
    for key, allowed in (("params", params.PARAMS), ("dtypes", DTYPES)):
        if key in c:
            v = c[key]
            if not isinstance(v, (list, tuple)) or any(x not in allowed for x in v):
                raise ContractError(f"contract.{key}: must be a list drawn from {', '.join(allowed)}, got {v!r}")
    if "dtypes" in c and not c["dtypes"]:
        raise ContractError("contract.dtypes: must name at least one dtype")
    if "source" in c and not isinstance(c["source"], str):
        raise ContractError(f"contract.source: must be a string, got {c['source']!r}")
    if "approximation" in c:
        _check_approximation(c["approximation"])
    if "softmax_dtype" in c and c["softmax_dtype"] not in SOFTMAX_DTYPES:
        raise ContractError(f"contract.softmax_dtype: must be one of {', '.join(SOFTMAX_DTYPES)}, "
                            f"got {c['softmax_dtype']!r}")
    if "grad_weight_form" in c and c["grad_weight_form"] not in GRAD_WEIGHT_FORMS:
        raise ContractError(f"contract.grad_weight_form: must be one of {', '.join(GRAD_WEIGHT_FORMS)}, "
                            f"got {c['grad_weight_form']!r}")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in c.items()}


def _check_approximation(a):
    if not isinstance(a, dict) or a.get("name") not in APPROXIMATIONS:
        raise ContractError(f"contract.approximation.name: must be one of {', '.join(APPROXIMATIONS)}, got "
                            f"{a.get('name') if isinstance(a, dict) else a!r}")
    eps = a.get("eps")
    if not isinstance(eps, dict) or not eps:
        raise ContractError(f"contract.approximation.eps: must map input dtypes to a threshold, got {eps!r}")
    for d, e in eps.items():
        if d not in DTYPES:
            raise ContractError(f"contract.approximation.eps: keys must be drawn from {', '.join(DTYPES)}, got {d!r}")
        if isinstance(e, bool) or not isinstance(e, (int, float)) or not 0 < e < 1:
            raise ContractError(f"contract.approximation.eps.{d}: must be a number in (0, 1), got {e!r}")
    devices = a.get("devices", ["cpu", "cuda"])
    if not isinstance(devices, list) or not devices or any(d not in ("cpu", "cuda") for d in devices):
        raise ContractError(f"contract.approximation.devices: must be a list drawn from cpu, cuda, got {devices!r}")
    for key in a:
        if key not in ("name", "eps", "devices", "source"):
            raise ContractError(f"contract.approximation.{key}: unknown field (known: name, eps, devices, source)")
