"""`cuda-oob`: a Triton kernel that reads far past its input (an illegal address). For the
CUDA-fault re-run (fuzz/findings/cuda_fault.hpp): the campaign marks the finding cuda_poisoned and the
re-run must name `_flce_oob_read_kernel` and the launch line below. CUDA only."""
import torch

from .model import supports_flce_only

_kernel = None


def version():
    return "cuda-oob-1"


def supports(case):
    reason = supports_flce_only(case)
    if reason:
        return reason
    if case.get("device") != "cuda" or not torch.cuda.is_available():
        return "cuda-oob needs CUDA (its fault is a GPU kernel's)"
    try:
        import triton  # noqa: F401
    except Exception as e:
        return f"cuda-oob needs triton: {type(e).__name__}: {e}"
    return None


def _build():
    import triton
    import triton.language as tl

    @triton.jit
    def _flce_oob_read_kernel(x_ptr, out_ptr, far):
        out = tl.load(x_ptr + far)  # unmasked, 2**40 elements past x: an illegal address
        tl.store(out_ptr, out)

    return _flce_oob_read_kernel


def flce(x, w, target, **_options):
    global _kernel
    _kernel = _kernel or _build()
    out = torch.empty(1, device=x.device, dtype=x.dtype)
    _flce_oob_read_kernel = _kernel
    _flce_oob_read_kernel[(1,)](x, out, 1 << 40)
    torch.cuda.synchronize()
    raise AssertionError("unreachable: the read above faults")
