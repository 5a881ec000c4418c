#!/usr/bin/env python3
"""cut-cross-entropy (impl="cce", CUDA): backward of a mean over a batch whose every target is ignored
raises ZeroDivisionError.

Found by flce (`flce campaign --subject cce --device cuda`, seed 11; see
cce-25.1.1-all-ignored-mean-backward.md next to this file). Needs torch with CUDA and
cut-cross-entropy (tested with 25.1.1).

LinearCrossEntropyFunction.backward scales the gradient by `1 / lse.numel()`, and lse holds only the
non-ignored rows: with none left that is 1 / 0. The forward already returned NaN (the mean of no
tokens, as torch's cross_entropy does); the gradient of such a batch is all zeros in
`F.cross_entropy` and in cut-cross-entropy's own impl="torch_compile" path. A padded micro-batch
(all -100) is common in packed-sequence training, and there the whole step fails.

  python cce-25.1.1-all-ignored-mean-backward.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

try:
    import torch
    import torch.nn.functional as F
    from cut_cross_entropy import linear_cross_entropy
except ImportError as e:
    print(f"SKIP: cannot import torch / cut_cross_entropy: {e}")
    sys.exit(2)


def run(impl, e0, c0, t, reduction):
    e, c = e0.clone().requires_grad_(), c0.clone().requires_grad_()
    try:
        loss = linear_cross_entropy(e, c, t, impl=impl, reduction=reduction, filter_eps=None) \
            if impl == "cce" else linear_cross_entropy(e, c, t, impl=impl, reduction=reduction)
        loss.backward()
    except Exception as ex:  # noqa: BLE001 -- the point is which exception
        return f"{type(ex).__name__}: {ex}", True
    return (f"loss {loss.item()}, |grad e| {e.grad.abs().max().item()}, "
            f"|grad c| {c.grad.abs().max().item()}"), False


def main():
    if not torch.cuda.is_available():
        print("SKIP: impl='cce' needs CUDA")
        return 2
    import importlib.metadata as md
    print(f"torch {torch.__version__}, cut-cross-entropy {md.version('cut-cross-entropy')}")
    g = torch.Generator().manual_seed(0)
    e0 = torch.randn(11, 24, generator=g).to("cuda", torch.bfloat16)
    c0 = (torch.randn(64, 24, generator=g) / 5).to("cuda", torch.bfloat16)
    t = torch.full((11,), -100, device="cuda")
    ref_e, ref_c = e0.float().requires_grad_(), c0.float().requires_grad_()
    ref = F.cross_entropy(ref_e @ ref_c.T, t, reduction="mean")
    ref.backward()
    print(f"{'F.cross_entropy (fp32)':28s} loss {ref.item()}, |grad e| {ref_e.grad.abs().max().item()}, "
          f"|grad c| {ref_c.grad.abs().max().item()}")
    bad = False
    for impl, reduction in (("torch_compile", "mean"), ("cce", "sum"), ("cce", "mean")):
        text, raised = run(impl, e0, c0, t, reduction)
        print(f"{impl + ' ' + reduction:28s} {text}")
        bad = bad or (raised and impl == "cce")
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
