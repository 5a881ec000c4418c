#!/usr/bin/env python3
"""torch.nn.functional.linear_cross_entropy (torch 2.13, chunked path): with fp16/bf16 inputs and
acc_dtype=torch.float32, grad of linear_weight is accumulated across chunks in the input dtype, so
its error grows with the number of chunks (batch_chunk_size); acc_policy's documentation says the
balanced policy keeps an acc_dtype scratch "for cross-chunk weight-grad accumulation".

Found by flce (`flce conformance --subjects torch-native,...,torch-native-chunk1`, CPU, seed 61:
`out-of-bounds@eager[accum_dtype=fp32]` on torch-native-chunk1; see
torch-2.13-linear-cross-entropy-chunk-grad-weight-bf16.md next to this file). Needs torch >= 2.13
only; runs on CPU.

  python torch-2.13-linear-cross-entropy-chunk-grad-weight-bf16.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys
import warnings

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"SKIP: cannot import torch: {e}")
    sys.exit(2)


def main():
    if not hasattr(F, "linear_cross_entropy") or not hasattr(torch.nn, "LinearCrossEntropyOptions"):
        print(f"SKIP: torch {torch.__version__} has no torch.nn.functional.linear_cross_entropy (torch >= 2.13)")
        return 2
    warnings.filterwarnings("ignore")
    print(f"torch {torch.__version__}")
    g = torch.Generator().manual_seed(0)
    BT, H, V = 4096, 64, 256
    x = torch.randn(BT, H, generator=g).bfloat16()
    w = (torch.randn(V, H, generator=g) * 0.2).bfloat16()
    target = torch.randint(0, V, (BT,), generator=g)
    x64, w64 = x.double(), w.double().requires_grad_()
    F.cross_entropy(x64 @ w64.T, target, reduction="sum").backward()
    exact = w64.grad

    def rel(grad):
        return ((grad.double() - exact).norm() / exact.norm()).item()

    wr = w.clone().requires_grad_()
    F.cross_entropy(F.linear(x, wr), target, reduction="sum").backward()
    print(f"{'options=None (the reference path, all bf16)':58s} grad_weight rel. error {rel(wr.grad):.2e}")
    errors = {}
    for policy in ("accurate", "balanced"):
        for chunk in (BT, 256, 16, 1):
            wc = w.clone().requires_grad_()
            opts = torch.nn.LinearCrossEntropyOptions(acc_policy=policy, acc_dtype=torch.float32,
                                                      batch_chunk_size=chunk, chunking_method=None)
            F.linear_cross_entropy(x, wc, target, reduction="sum", options=opts).backward()
            errors[policy, chunk] = rel(wc.grad)
            print(f"acc_policy={policy!r:10s} acc_dtype=float32 {BT // chunk:5d} chunks"
                  f"{'':14s} grad_weight rel. error {errors[policy, chunk]:.2e}")
    print(f"bf16 unit roundoff {2 ** -8:.2e}")
    # One chunk is as accurate as fp32 accumulation allows; 4096 chunks lose over 10x that, while
    # the scratch is fp32: the sum across chunks is the one left in bf16.
    bad = all(errors[p, 1] > 10 * errors[p, BT] for p in ("accurate", "balanced"))
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
