"""The model with a custom op tapped into its compiled path only: what planted compiled-path bugs
(`bug_second_shape`, `bug_trace_error`) are made of. The op's kernel and fake implementation
carry the bug; eager never calls the op and is the model's.
"""
import functools

import torch

from . import model


def tapped(name, kernel, fake):
    """The planted subject `name`: (VARIANT, flce, version). `kernel(x) -> Tensor` (annotated, as
    torch.library.custom_op requires) runs in compiled graphs, `fake(x)` while they are traced."""
    variant = model.Variant(name=name)
    inner = model.subject(variant)
    op = torch.library.custom_op(f"flce_{name.replace('-', '_')}::tap", mutates_args=())(kernel)
    op.register_fake(fake)
    op.register_autograd(lambda ctx, grad: grad)

    @functools.wraps(inner)
    def flce(x, w, target, *args, **kwargs):
        if torch.compiler.is_compiling():
            x = op(x)
        return inner(x, w, target, *args, **kwargs)

    def version():
        return f"{model.VERSION}+{name}"

    return variant, flce, version
