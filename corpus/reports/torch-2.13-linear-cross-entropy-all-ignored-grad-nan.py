#!/usr/bin/env python3
"""torch.nn.functional.linear_cross_entropy (torch 2.13, chunked path): a mean over a batch whose every
target is ignored gives NaN gradients; the reference path, and cross_entropy(linear(...)) that the
function documents itself as, give zeros.

Found by flce (`flce conformance --subjects model,torch-native,cce`, CPU, seed 1: the torch-native
finding `nonfinite@eager[ignore_fraction=all]`; see torch-2.13-linear-cross-entropy-all-ignored-grad-nan.md
next to this file). Needs torch >= 2.13 only; runs on CPU.

  python torch-2.13-linear-cross-entropy-all-ignored-grad-nan.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"SKIP: cannot import torch: {e}")
    sys.exit(2)


def grads(x0, w0, target, **kw):
    x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
    loss = F.linear_cross_entropy(x, w, target, **kw) if kw.get("options", 0) != 0 else \
        F.cross_entropy(F.linear(x, w), target)
    loss.backward()
    return loss.item(), int(x.grad.isnan().sum()), int(w.grad.isnan().sum()), x.grad.numel() + w.grad.numel()


def main():
    if not hasattr(F, "linear_cross_entropy") or not hasattr(torch.nn, "LinearCrossEntropyOptions"):
        print(f"SKIP: torch {torch.__version__} has no torch.nn.functional.linear_cross_entropy (torch >= 2.13)")
        return 2
    print(f"torch {torch.__version__}")
    g = torch.Generator().manual_seed(0)
    bad = False
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(25, 18, generator=g).to(dtype)
        w = (torch.randn(64, 18, generator=g) / 4).to(dtype)
        target = torch.full((25,), -100)
        rows = (("cross_entropy(linear(...))", {"options": 0}),
                ("options=None (reference)", {"options": None}),
                ("chunked, acc_dtype default", {"options": torch.nn.LinearCrossEntropyOptions()}),
                ("chunked, acc_dtype fp32", {"options": torch.nn.LinearCrossEntropyOptions(acc_dtype=torch.float32)}))
        for name, kw in rows:
            loss, nx, nw, n = grads(x, w, target, **kw)
            print(f"{str(dtype):15s} {name:28s} loss {loss}; NaN in grad_input {nx}, grad_weight {nw} of {n}")
            bad = bad or (nx + nw > 0 and kw["options"] not in (0, None))
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
