#!/usr/bin/env python3
"""torch.nn.functional.linear_cross_entropy (torch 2.13, chunked path, mean or sum): torch.compile with
fullgraph=True fails, because the function itself calls warnings.warn under torch.compile.

Found by flce (`flce conformance --subjects model,torch-native,cce`, CPU, seed 1: the torch-native finding
`bucket-ddc5f42515c0` on the compiled lane, fullgraph; see torch-2.13-linear-cross-entropy-fullgraph-warn.md).
Needs torch >= 2.13 only; runs on CPU.

With the default options (allow_retain_graph=False) and torch.compiler.is_compiling(), the function warns
"forcing allow_retain_graph=True under torch.compile" before going on. Dynamo cannot trace
`_warnings.warn` ("Attempted to call function marked as skipped"): a graph break, which fullgraph=True turns
into an error. Constructing the options with allow_retain_graph=True, as the warning says, compiles.

  python torch-2.13-linear-cross-entropy-fullgraph-warn.py   exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP
"""
import sys

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
    print(f"torch {torch.__version__}")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 6, generator=g, requires_grad=True)
    w = torch.randn(56, 6, generator=g, requires_grad=True)
    t = torch.randint(0, 56, (16,), generator=g)
    bad = False
    for retain in (False, True):
        options = torch.nn.LinearCrossEntropyOptions(allow_retain_graph=retain)
        for fullgraph in (False, True):
            torch._dynamo.reset()
            fn = torch.compile(lambda x, w, t, o=options: F.linear_cross_entropy(x, w, t, options=o),
                               fullgraph=fullgraph)
            label = f"allow_retain_graph={retain!s:5s} fullgraph={fullgraph!s:5s}"
            try:
                loss = fn(x, w, t)
                loss.backward()
                print(f"{label} loss {loss.item():.6f}")
            except Exception as e:  # noqa: BLE001 -- which exception is the point
                first = str(e).strip().splitlines()[0]
                print(f"{label} {type(e).__name__}: {first}")
                bad = bad or (fullgraph and not retain and "skipped" in str(e))
    print("REPRODUCED" if bad else "NOT REPRODUCED")
    return 0 if bad else 1


if __name__ == "__main__":
    sys.exit(main())
