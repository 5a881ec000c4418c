#!/usr/bin/env python3
"""cut-cross-entropy (impl="cce", CUDA): with `softcap`, the vocabulary padding of the last block
enters the log-sum-exp as logits of -softcap.

Found by flce (`flce campaign --subject cce --device cuda`, seed 11; see
cce-25.1.1-softcap-padded-columns.md next to this file). Needs torch with CUDA and
cut-cross-entropy (tested with 25.1.1).

cce_lse_forward.py masks the columns past V with `tl.where(v_mask, accum, -inf)` and only then
applies the softcap: softcap * tanh(-inf / softcap) = -softcap, so each padded column adds
exp(-softcap) to the sum of exponentials. The loss (and through the saved lse every gradient) is
then too large whenever V is not a multiple of the kernel's BLOCK_V. The check below recovers, per
row and in fp64, how many extra columns at -softcap the returned loss implies: a whole number
that is the padding of the last block, and 0 without softcap.

  python cce-25.1.1-softcap-padded-columns.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import math
import sys

try:
    import torch
    from cut_cross_entropy import linear_cross_entropy
except ImportError as e:
    print(f"SKIP: cannot import torch / cut_cross_entropy: {e}")
    sys.exit(2)


def extra_columns(e, c, t, softcap, loss):
    """k such that loss = log(sum_j exp(s_j) + k exp(-softcap)) - s_t, in fp64, per row.
    s_t as the kernel computes it: products rounded to fp16 before the fp32 sum (indexed_dot.py,
    cce-25.1.1-target-logit-bf16-products.py), so that error does not blur k."""
    z = e.double() @ c.double().T
    s = z if softcap is None else softcap * torch.tanh(z / softcap)
    pad = math.exp(-softcap) if softcap is not None else math.exp(-1.0)
    zt = (e.float() * c[t].float()).to(e.dtype).double().sum(1)  # exact products, then rounded
    st = zt if softcap is None else softcap * torch.tanh(zt / softcap)
    lse_got = loss.double() + st
    return (torch.exp(lse_got) - torch.exp(s).sum(1)) / pad


def main():
    if not torch.cuda.is_available():
        print("SKIP: impl='cce' needs CUDA")
        return 2
    import importlib.metadata as md
    print(f"torch {torch.__version__}, cut-cross-entropy {md.version('cut-cross-entropy')}")
    g = torch.Generator().manual_seed(0)
    bad = False
    for V in (64, 100, 1000, 1024):
        e = torch.randn(8, 32, generator=g).to("cuda", torch.float16)
        c = (torch.randn(V, 32, generator=g) / 6).to("cuda", torch.float16)
        t = torch.randint(0, V, (8,), generator=g).to("cuda")
        for softcap in (None, 3.0):
            loss = linear_cross_entropy(e, c, t, impl="cce", softcap=softcap, reduction="none", filter_eps=None)
            k = extra_columns(e, c, t, softcap, loss)
            z = e.double() @ c.double().T
            s = z if softcap is None else softcap * torch.tanh(z / softcap)
            ref = torch.logsumexp(s, 1) - s.gather(1, t[:, None]).squeeze(1)
            err = (loss.double() - ref).abs().max().item()
            ks = sorted({round(x) for x in k.tolist()})
            print(f"V={V:5d} softcap={softcap!s:5s} max |loss - fp64| {err:.2e}  "
                  f"extra columns at -softcap implied per row: {ks}")
            if softcap is not None and err > 1e-3 and min(ks) > 0 and (k - k.round()).abs().max() < 0.25:
                bad = True
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
