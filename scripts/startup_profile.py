"""Where a campaign worker's first seconds go, one phase at a time (time to first finding).

    flce case canonical CASE.json > /tmp/case.json
    PYTHONPATH=subjects python3 scripts/startup_profile.py /tmp/case.json [--subject liger]

Runs CASE the way a campaign worker's child python does: imports, CUDA start, the subject's
first eager call, a second one, then the compiled call and each rung of the backend ladder.
Prints one "phase seconds" line per step and the number of Triton cache entries the eager
call added (its kernels compiled cold). CASE must be canonical (every field, e.g. which
leaves require grad). Inputs are random: only the timing matters here.
"""
import argparse
import json
import os
import sys
import time

T0 = time.perf_counter()
last = [T0]


def mark(phase, extra=""):
    now = time.perf_counter()
    print(f"{phase:<28} {now - last[0]:7.3f} s   (at {now - T0:6.3f} s){extra}", flush=True)
    last[0] = now


def triton_entries():
    d = os.environ.get("TRITON_CACHE_DIR") or os.path.expanduser("~/.triton/cache")
    return len(os.listdir(d)) if os.path.isdir(d) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--subject", default="liger")
    a = ap.parse_args()
    with open(a.case) as f:
        case = json.load(f)
    import torch

    mark("import torch")
    torch.zeros(1, device="cuda")
    mark("cuda context")
    from flce_subjects import host_api, registry, runner

    mark("import flce_subjects")
    env = host_api.environment()
    mark("environment()", f"  {env.get('gpu')} torch {env.get('torch')} triton {env.get('triton')}")
    subject = registry.load(a.subject, None)
    mark("load subject")
    reason = subject.supports(case) if subject.supports else None
    mark("subject.supports()", f"  {reason or 'supported'}")
    g = torch.Generator().manual_seed(0)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    bt, h, v = case["BT"], case["H"], case["V"]
    tensors = {
        "x": torch.randn(bt, h, generator=g).to("cuda", dt[case["input_dtype"]]),
        "w": torch.randn(v, h, generator=g).to("cuda", dt[case["weight_dtype"]]),
        "target": torch.randint(0, v, (bt,), generator=g).to("cuda"),
    }
    for i in (1, 2):
        before = triton_entries()
        r = runner.run(case, tensors, a.subject, "eager")
        torch.cuda.synchronize()
        mark(f"eager call {i}", f"  {r['status']}, triton cache +{triton_entries() - before}")
    for backend in ("inductor", "eager", "aot_eager", "aot_eager_decomp_partition"):
        r = runner.run(case, tensors, a.subject, "compiled", backend)
        chain = (r.get("error") or {}).get("chain") or [{}]
        mark(f"compiled[{backend}]", f"  {r['status']} {chain[-1].get('type', '')}")


if __name__ == "__main__":
    sys.exit(main())
