"""`aten-dtype-out`: the raw op family behind Liger's grad_weight accumulation.

a is mat1/batch1 [V,BT] (or [batch,V,BT]), b is mat2 [BT,H], c is self for addmm/baddbmm
(beta=1, alpha=1). With out_variant the result is written through out=: for addmm/baddbmm
into c.clone() -- Liger's accumulate-in-place `addmm(c, a, b, out_dtype=..., out=c)` -- and
for mm/bmm into a fresh empty tensor of out_dtype.
"""
import torch

OPS = {"mm": torch.mm, "bmm": torch.bmm, "addmm": torch.addmm, "baddbmm": torch.baddbmm}
ACCUMULATING = ("addmm", "baddbmm")


def version():
    return f"aten {torch.__version__}"


def supports(case):
    if case.get("kind") not in OPS:
        return "aten-dtype-out runs the op kinds (mm/addmm/bmm/baddbmm), not kind=flce"
    return None


def op(kind, a, b, c, out_dtype, out_variant):
    fn = OPS[kind]
    args = (c, a, b) if kind in ACCUMULATING else (a, b)
    if not out_variant:
        return fn(*args, out_dtype=out_dtype)
    if kind in ACCUMULATING:
        out = c.clone()
        args = (out, a, b)
    else:
        shape = (*a.shape[:-1], b.shape[-1])
        out = torch.empty(shape, dtype=out_dtype, device=a.device)
    return fn(*args, out_dtype=out_dtype, out=out)
