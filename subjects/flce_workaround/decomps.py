"""The out_dtype matmul family, written from its semantics (not derived from torch's decomps).

mm/bmm(a, b, out_dtype)                 = round_to(out_dtype, a @ b)
addmm/baddbmm(c, a, b, out_dtype, beta, alpha)
                                        = round_to(out_dtype, alpha * (a @ b) + beta * c)
with the product and the beta/alpha update carried out in fp32 (fp64 for fp64 inputs), i.e.
one rounding at the end, as cuBLAS does with an fp32 compute type. beta == 0 ignores c
(NaN/Inf in c do not propagate), as BLAS specifies. Signatures mirror the aten schemas
exactly (beta/alpha/out keyword-only), so nothing can be bound positionally by mistake.
"""
import torch

aten = torch.ops.aten
_LOW = (torch.float16, torch.bfloat16)


def _acc_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def _check(a, b, out_dtype, what):
    torch._check(
        a.dtype == b.dtype,
        lambda: f"{what}: mat1 and mat2 must have the same dtype, but got {a.dtype} and {b.dtype}",
    )
    torch._check(
        out_dtype == a.dtype or (out_dtype == torch.float32 and a.dtype in _LOW),
        lambda: f"{what}: out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs",
    )


def _native_out_dtype(t):
    """Devices where Inductor lowers mm/bmm(out_dtype=) itself (tuned_mm/tuned_bmm)."""
    return t.device.type in ("cuda", "xpu")


def _product(a, b, batched):
    matmul = torch.bmm if batched else torch.mm
    acc = _acc_dtype(a.dtype)
    if a.dtype == acc:
        return matmul(a, b)
    if _native_out_dtype(a):  # keep low-precision tensor-core inputs, fp32 accumulate
        return matmul(a, b, out_dtype=acc)
    return matmul(a.to(acc), b.to(acc))


def _update(c, prod, beta, alpha):
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    c = c.to(prod.dtype)
    return prod + (c if beta == 1 else c * beta)  # prod first: result keeps its contiguous layout


def _write(result, out, out_dtype):
    torch._check(
        out.dtype == out_dtype,
        lambda: f"Expected out tensor to have dtype {out_dtype} but got {out.dtype} instead",
    )
    if out.shape != result.shape:
        out.resize_(result.shape)
    return out.copy_(result)


def mm_dtype(self, mat2, out_dtype):
    _check(self, mat2, out_dtype, "mm")
    return _product(self, mat2, False).to(out_dtype)


def mm_dtype_out(self, mat2, out_dtype, *, out):
    return _write(mm_dtype(self, mat2, out_dtype), out, out_dtype)


def bmm_dtype(self, mat2, out_dtype):
    _check(self, mat2, out_dtype, "bmm")
    return _product(self, mat2, True).to(out_dtype)


def bmm_dtype_out(self, mat2, out_dtype, *, out):
    return _write(bmm_dtype(self, mat2, out_dtype), out, out_dtype)


def addmm_dtype(self, mat1, mat2, out_dtype, *, beta=1, alpha=1):
    _check(mat1, mat2, out_dtype, "addmm")
    return _update(self, _product(mat1, mat2, False), beta, alpha).to(out_dtype)


def addmm_dtype_out(self, mat1, mat2, out_dtype, *, beta=1, alpha=1, out):
    return _write(addmm_dtype(self, mat1, mat2, out_dtype, beta=beta, alpha=alpha), out, out_dtype)


def baddbmm_dtype(self, batch1, batch2, out_dtype, *, beta=1, alpha=1):
    _check(batch1, batch2, out_dtype, "baddbmm")
    return _update(self, _product(batch1, batch2, True), beta, alpha).to(out_dtype)


def baddbmm_dtype_out(self, batch1, batch2, out_dtype, *, beta=1, alpha=1, out):
    return _write(baddbmm_dtype(self, batch1, batch2, out_dtype, beta=beta, alpha=alpha), out, out_dtype)


def _all():
    return {
        aten.mm.dtype: mm_dtype,
        aten.mm.dtype_out: mm_dtype_out,
        aten.bmm.dtype: bmm_dtype,
        aten.bmm.dtype_out: bmm_dtype_out,
        aten.addmm.dtype: addmm_dtype,
        aten.addmm.dtype_out: addmm_dtype_out,
        aten.baddbmm.dtype: baddbmm_dtype,
        aten.baddbmm.dtype_out: baddbmm_dtype_out,
    }


def core_entries():
    """Core table: only the overloads whose core decomposition is the broken packet one.
    (mm/bmm have Python meta kernels, which FakeTensor prefers over any decomposition.)"""
    return {op: fn for op, fn in _all().items() if op.overloadpacket in (aten.addmm, aten.baddbmm)}


def _keep_native_lowering(fn):
    def entry(*args, **kwargs):
        if _native_out_dtype(args[0]):
            return NotImplemented  # Inductor falls through to tuned_mm/tuned_bmm(out_dtype)
        return fn(*args, **kwargs)

    entry.__name__ = fn.__name__
    return entry


def inductor_entries():
    out = {}
    for op, fn in _all().items():
        native_ok = op.overloadpacket in (aten.mm, aten.bmm)
        out[op] = _keep_native_lowering(fn) if native_ok else fn
    return out


def eager_kernels():
    """Eager CPU kernels: same math, registered under the CPU dispatch key."""
    return _all()
