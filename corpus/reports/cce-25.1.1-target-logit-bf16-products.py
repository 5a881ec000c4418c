#!/usr/bin/env python3
"""cut-cross-entropy (impl="cce", CUDA, bf16/fp16): the target logit is summed from products rounded
to the input dtype, so the loss carries an error its own reference path does not have.

Found by flce (`flce campaign --subject cce --device cuda`, seed 11, reduction="none"; see
cce-25.1.1-target-logit-bf16-products.md next to this file). Needs torch with CUDA and
cut-cross-entropy (tested with 25.1.1).

The loss is lse - z_t. The lse kernel (cce_lse_forward.py) gets its logits from tl.dot: exact
products, fp32 sums. The target logit z_t comes from indexed_dot.py, `dot = (e * c).to(tl.float32)`:
each product e_k * c_tk is rounded to bf16 first (8 bits), then summed in fp32. The loss error is
then the sum of H product roundings, about sqrt(H) * 2^-9 * |e_k c_tk| -- larger than rounding z_t
itself to bf16 once (2^-9 |z_t|, what cut-cross-entropy's own impl="torch_compile" path does) when
the products cancel. The check predicts that error exactly: sum_k (bf16(e_k c_tk) - e_k c_tk) in
fp64, and shows that it is what the loss is off by (the rest is the fp32 lse, ~1e-6).
Upcasting before the multiply, `e.to(tl.float32) * c.to(tl.float32)`, removes it.

  python cce-25.1.1-target-logit-bf16-products.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

try:
    import torch
    from cut_cross_entropy import linear_cross_entropy
except ImportError as e:
    print(f"SKIP: cannot import torch / cut_cross_entropy: {e}")
    sys.exit(2)


def main():
    if not torch.cuda.is_available():
        print("SKIP: impl='cce' needs CUDA")
        return 2
    import importlib.metadata as md
    print(f"torch {torch.__version__}, cut-cross-entropy {md.version('cut-cross-entropy')}")
    g = torch.Generator().manual_seed(0)
    bad = False
    for H in (32, 512, 4096):
        e = torch.randn(256, H, generator=g).to("cuda", torch.bfloat16)
        c = (torch.randn(1000, H, generator=g) / H**0.5).to("cuda", torch.bfloat16)
        t = torch.randint(0, 1000, (256,), generator=g).to("cuda")
        loss = linear_cross_entropy(e, c, t, impl="cce", reduction="none", filter_eps=None).double()
        z = e.double() @ c.double().T
        zt = z.gather(1, t[:, None]).squeeze(1)
        ref = torch.logsumexp(z, 1) - zt
        # The exact products of two bf16 values fit in fp32; .to(bfloat16) rounds them as the kernel does.
        prod = e.float() * c[t].float()
        predicted = -(prod.to(torch.bfloat16).double() - prod.double()).sum(1)  # error of -z_t
        err = loss - ref
        rest = (err - predicted).abs().max().item()
        # The torch_compile path's own rounding: z_t rounded to bf16 once.
        once = (zt.float().to(torch.bfloat16).double() - zt).abs().max().item()
        print(f"H={H:5d} max |loss - fp64| {err.abs().max().item():.2e}; predicted by bf16 products: "
              f"{predicted.abs().max().item():.2e}, what is left {rest:.1e}; z_t rounded to bf16 once: {once:.2e}")
        if err.abs().max().item() > 1e-3 and rest < 0.1 * err.abs().max().item():
            bad = True
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
