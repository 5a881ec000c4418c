#!/usr/bin/env python3
"""cut-cross-entropy: `linear_cross_entropy` cannot be traced by torch.compile(fullgraph=True).

Found by flce (`flce conformance --subjects model,torch-native,cce --seed 1`, CPU; see
cce-25.1.1-fullgraph-data-dependent-valids.md next to this file). Needs torch (2.13 on CPU was
tested) and cut-cross-entropy (tested with 25.1.1); runs on CPU with impl="torch_compile", and also
tries impl="cce" where CUDA is there.

`_build_flat_valids` (cut_cross_entropy/utils.py) returns
`valids.squeeze(1) if valids.numel() != targets.numel() else None`, where `valids` comes from
`nonzero()`: its size is data-dependent, so Dynamo cannot decide the branch. Outside fullgraph that
is a graph break; a model compiled with fullgraph=True fails on its first step, whatever the targets.

  python cce-25.1.1-fullgraph-data-dependent-valids.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

try:
    import torch
    from cut_cross_entropy import linear_cross_entropy
except ImportError as e:
    print(f"SKIP: cannot import torch / cut_cross_entropy: {e}")
    sys.exit(2)


def chain(ex):
    """Every exception of the chain, outermost first."""
    while ex is not None:
        yield ex
        ex = ex.__cause__ or ex.__context__


def attempt(impl, device, fullgraph):
    torch._dynamo.reset()
    g = torch.Generator().manual_seed(0)
    dt = torch.bfloat16
    e = torch.randn(4, 8, generator=g).to(device, dt).requires_grad_()
    c = torch.randn(16, 8, generator=g).to(device, dt).requires_grad_()
    t = torch.tensor([1, 5, 7, 2], device=device)  # no target ignored

    def step(e, c, t):
        return linear_cross_entropy(e, c, t, impl=impl)

    try:
        loss = torch.compile(step, fullgraph=fullgraph)(e, c, t)
        loss.backward()
    except Exception as ex:  # noqa: BLE001 -- the point is which exception
        names = [type(x).__name__ for x in chain(ex)]
        text = " | ".join(str(x).partition("\n")[0][:160] for x in chain(ex))
        where = "_build_flat_valids" in "".join(str(x) for x in chain(ex))
        return f"{' <- '.join(names)}: {text}", where
    return f"ok, loss {loss.item():.4f}", False


def main():
    import importlib.metadata as md
    print(f"torch {torch.__version__}, cut-cross-entropy {md.version('cut-cross-entropy')}")
    runs = [("torch_compile", "cpu")] + ([("cce", "cuda")] if torch.cuda.is_available() else [])
    reproduced = False
    for impl, device in runs:
        for fullgraph in (False, True):
            what, in_valids = attempt(impl, device, fullgraph)
            print(f"impl={impl:<13} {device:<4} fullgraph={fullgraph!s:<5}  {what}")
            reproduced |= fullgraph and in_valids
    print("REPRODUCED" if reproduced else "NOT REPRODUCED")
    return 0 if reproduced else 1


if __name__ == "__main__":
    sys.exit(main())
