"""`model-bug-second-shape`: Planted order-dependent bug (the shape of pytorch#181735).

The compiled path fails only when a compiled function sees its second distinct shape under
automatic dynamic shapes (compile.dynamic null): Dynamo recompiles with symbolic sizes, and
a trace-time check (the fake implementation of a custom op, run only while tracing) raises,
as Inductor's decompose_triton_kernel_wrapper_functional asserts on Liger's FLCE. The state
is Dynamo's own per compiled function (its automatic-dynamic record on the code object, which
flce's compiled cache keeps separate per graph configuration), so a case alone passes in a
fresh process and fails after an earlier case of the same graph with another shape.
Eager never calls the op and is the model's.
"""
import torch

from . import compiled_tap, model

CONTRACT = model.CONTRACT  # the model's promise: a planted bug changes the code, not the contract


def _tap(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


def _tap_fake(x):
    if any(isinstance(d, torch.SymInt) for d in x.shape):
        raise AssertionError("model-bug-second-shape: recompiled with symbolic shapes (planted)")
    return torch.empty_like(x)


VARIANT, flce, version = compiled_tap.tapped("model-bug-second-shape", _tap, _tap_fake)
supports = model.supports
