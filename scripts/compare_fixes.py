"""The two fixes for Liger #1327 side by side, at a realistic shape on the GPU: Liger's FLCE
in its seed configuration (bf16 x and W, accum_dtype=fp32), eager and torch.compile'd, with
(a) nothing, (b) flce_workaround enabled, (c) whatever Liger tree is first on PYTHONPATH
(PR #1328's guard in scripts/gpu_run.sh). One process per row, so each row imports its own
Liger. Per row: compiled outcome, median fwd+bwd ms (CUDA events, warm-up), first-call
compile seconds, and the error of loss / grad_input / grad_weight against an fp64 autograd
reference of the same inputs (relative Frobenius norm), eager next to compiled.

    python3 scripts/compare_fixes.py --label NAME [--workaround] [--shape BTxHxV]
    python3 scripts/compare_fixes.py --table      # the rows so far, as Markdown
"""
import argparse
import json
import os
import sys
import time

ROWS = os.environ.get("FLCE_FIXES_ROWS", "/tmp/flce_fixes.jsonl")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_liger import timed  # noqa: E402 - same CUDA-event timing as the bench


def rel_fro(got, want):
    d = (got.double() - want).norm()
    n = want.norm()
    return float(d / n) if n > 0 else float(d)


def run(args):
    import torch

    if not torch.cuda.is_available():
        print("compare_fixes: no CUDA device", file=sys.stderr)
        return 2
    if args.workaround:
        sys.path.insert(0, os.path.join(HERE, "..", "subjects"))
        import flce_workaround

        flce_workaround.enable()
    import liger_kernel
    from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy as flce

    bt, h, v = (int(s) for s in args.shape.split("x"))
    g = torch.Generator(device="cuda").manual_seed(1327)
    x = (torch.randn(bt, h, device="cuda", generator=g) * 0.5).to(torch.bfloat16).requires_grad_()
    w = (torch.randn(v, h, device="cuda", generator=g) / h**0.5).to(torch.bfloat16).requires_grad_()
    t = torch.randint(0, v, (bt,), device="cuda", generator=g)

    # fp64 reference of the same (bf16-valued) inputs
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    ref_loss = torch.nn.functional.cross_entropy(x64 @ w64.t(), t)
    ref_loss.backward()
    ref = {"loss": ref_loss.detach(), "grad_input": x64.grad, "grad_weight": w64.grad}
    del x64, w64
    torch.cuda.empty_cache()

    def step(f):
        def go():
            x.grad = w.grad = None
            loss = f(x, w, t, accum_dtype=torch.float32)
            loss.backward()
            return loss

        return go

    def measure(f):
        out = {}
        t0 = time.perf_counter()
        loss = step(f)()
        torch.cuda.synchronize()
        out["first_call_s"] = time.perf_counter() - t0
        out["loss_err"] = abs(float(loss.detach().double()) - float(ref["loss"]))
        out["grad_input_err"] = rel_fro(x.grad, ref["grad_input"])
        out["grad_weight_err"] = rel_fro(w.grad, ref["grad_weight"])
        out["grad_weight_dtype"] = str(w.grad.dtype).replace("torch.", "")
        out["ms"] = timed(step(f))
        return out

    row = {"label": args.label, "liger": os.path.dirname(liger_kernel.__file__), "torch": torch.__version__,
           "shape": args.shape, "gpu": torch.cuda.get_device_name()}
    row["eager"] = measure(flce)
    try:
        row["compiled"] = measure(torch.compile(flce))
        row["compiled"]["outcome"] = "ok"
    except Exception as e:  # noqa: BLE001 - the outcome is what we report
        chain, cur = [], e
        while cur is not None and len(chain) < 8:
            chain.append(f"{type(cur).__name__}: {str(cur).splitlines()[0] if str(cur) else ''}")
            cur = cur.__cause__ or cur.__context__
        row["compiled"] = {"outcome": "error", "chain": chain}
    print(json.dumps(row))
    with open(ROWS, "a") as f:
        f.write(json.dumps(row) + "\n")
    return 0


def table():
    rows = []
    if os.path.exists(ROWS):
        with open(ROWS) as f:
            rows = [json.loads(line) for line in f]
    if not rows:
        print("compare_fixes: no rows")
        return 1
    r0 = rows[0]
    print(f"torch {r0['torch']} | {r0['gpu']} | BTxHxV {r0['shape']} | bf16, accum_dtype=fp32 | "
          "errors vs fp64 autograd (rel. Frobenius; loss abs)\n")
    print("| fix | mode | outcome | fwd+bwd ms | first call s | loss err | grad_input err | grad_weight err "
          "| grad_weight dtype |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for mode in ("eager", "compiled"):
            m = r[mode]
            if m.get("outcome") == "error":
                print(f"| {r['label']} | {mode} | error: {'; '.join(m['chain'])[:160]} | | | | | | |")
                continue
            print(f"| {r['label']} | {mode} | ok | {m['ms']:.2f} | {m['first_call_s']:.1f} | {m['loss_err']:.2e} | "
                  f"{m['grad_input_err']:.2e} | {m['grad_weight_err']:.2e} | {m['grad_weight_dtype']} |")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--label")
    p.add_argument("--workaround", action="store_true")
    p.add_argument("--shape", default="4096x4096x32000")
    p.add_argument("--table", action="store_true")
    a = p.parse_args()
    if a.table:
        return table()
    if not a.label:
        p.error("--label is required (or --table)")
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
