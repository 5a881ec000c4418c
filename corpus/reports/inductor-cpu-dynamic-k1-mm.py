#!/usr/bin/env python3
"""Inductor (CPU, dynamic shapes): a chunk's mm whose K is 1 only at run time reads past its inputs.

Hand-reduced from the flce case corpus/cases/model-inductor-cpu-dynamic-k1-chunk.json (see
inductor-cpu-dynamic-k1-mm.md next to this file). Needs torch only.

A loop over row chunks of 2, as fused linear cross entropy does it (Liger's chunking): the last
chunk x[2:min(4, BT)] has one row when BT = 3, so mm(g.t(), x_chunk) has K = min(4, s0) - 2.
Every target is ignored, so the right answer is all zeros. `target` is a view whose storage
goes on with 5 (no class: V = 3), so a read past its end trips Inductor's own bounds check
instead of reading whatever the allocator left there.

  python inductor-cpu-dynamic-k1-mm.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

try:
    import torch
except ImportError as e:
    print(f"SKIP: cannot import torch: {e}")
    sys.exit(2)


def chunked_grad_weight(x, w, target, cw):
    gw = torch.zeros_like(w)
    for s in (0, 2):  # chunks [0, 2) and [2, 3)
        e = min(s + 2, x.shape[0])
        t = target[s:e]
        keep = (t != -100).unsqueeze(-1)
        w_y = cw[torch.where(t != -100, t, 0)].unsqueeze(-1)
        g = torch.where(keep, (x[s:e] @ w.t()) * w_y, 0.0)
        gw += torch.mm(g.t(), x[s:e])
    return gw


def main():
    x, w, cw = torch.ones(3, 2), torch.ones(3, 2), torch.ones(3)
    target = torch.tensor([-100, -100, -100, 5, 5, 5])[:3]
    print(f"torch {torch.__version__}")
    want = chunked_grad_weight(x, w, target, cw)
    print(f"{'eager':22s} {want.flatten().tolist()}")
    bad = False
    for dynamic in (False, True):
        torch._dynamo.reset()
        fn = torch.compile(chunked_grad_weight, backend="inductor", dynamic=dynamic)
        label = f"inductor dynamic={dynamic}"
        try:
            got = fn(x, w, target, cw)
        except RuntimeError as e:
            line = next((ln for ln in str(e).splitlines() if "index out of bounds" in ln), str(e).splitlines()[0])
            print(f"{label:22s} RuntimeError: {line.strip()[-80:]}")
            bad = True
            continue
        same = torch.equal(got, want)
        print(f"{label:22s} {got.flatten().tolist()}{'' if same else '  <- differs from eager'}")
        bad = bad or not same
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
