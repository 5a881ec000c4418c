"""`model-bug-trace-error`: Planted compiled-path failure of no known signature.

The compiled path calls a custom op whose fake implementation traces fine and whose kernel
raises, so every compiled graph fails when it runs, under every backend, with a message that
judge/signatures.json does not know: its signature is a bucket. (A raise in the fake
implementation would not do: Dynamo wraps it as "RuntimeError when making fake tensor call",
a generic known signature.) Deterministic, so a campaign's deferred ladder walk (walked after
the verdict, on an analysis worker) finds the same failure alone, at the ladder's first rung.
Eager never calls the op and is the model's.
"""
import torch

from . import compiled_tap, model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract


def _tap(x: torch.Tensor) -> torch.Tensor:
    raise ValueError("model-bug-trace-error: the compiled graph's tap refuses to run (planted)")


def _tap_fake(x):
    return torch.empty_like(x)


VARIANT, flce, version = compiled_tap.tapped("model-bug-trace-error", _tap, _tap_fake)
supports = model.supports
