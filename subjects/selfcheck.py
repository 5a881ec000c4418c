#!/usr/bin/env python3
"""Self-check of flce's Python side through runner.run(), on tiny cases.

    .venv/bin/python subjects/selfcheck.py [--device cpu|cuda]

Prints one row per expectation and exits non-zero if any fails. Compiled rows expect the
trace-time failure that signatures.json predicts for *this* torch (tier 1 before 2.13,
tier 2 from 2.13), so the same script is meaningful on other torch versions.
"""
import argparse
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from flce_subjects import casegen, runner, signatures  # noqa: E402

TABLE = signatures.load()
ADDMM_COMPILE_FAILURES = signatures.expected_here(["tier1-decomposition", "tier2-lowering"], TABLE)
FULL_OPTIONS = dict(bias=True, ce_weight=True, ignore_fraction=0.25, label_smoothing=0.1,
                    lse_square_scale=1e-3, softcap=5.0, use_token_scaling=True, return_z_loss=True,
                    return_token_accuracy=True, return_predicted_tokens=True)
FP32 = dict(input_dtype="fp32", weight_dtype="fp32")
DEVICE = "cpu"
rows, failures = [], 0


def reference(c, t):
    """Naive fp64 FLCE with Liger's semantics; gradients by autograd."""
    f64 = torch.float64
    x = t["x"].to(f64).requires_grad_()
    w = t["w"].to(f64).requires_grad_()
    b = t["bias"].to(f64).requires_grad_() if c["bias"] else None
    logits = x @ w.t() + (b if b is not None else 0)
    if c["softcap"] is not None:
        logits = c["softcap"] * torch.tanh(logits / c["softcap"])
    V, tgt = logits.shape[1], t["target"]
    mask = tgt != c["ignore_index"]
    y = torch.where(mask, tgt, 0)
    logp, lse = torch.log_softmax(logits, -1), torch.logsumexp(logits, -1)
    cw = t["ce_weight"].to(f64) if c["ce_weight"] else torch.ones(V, dtype=f64, device=x.device)
    ls = c["label_smoothing"]
    per = (1 - ls) * -logp.gather(1, y[:, None]).squeeze(1) * cw[y] - ls * (logp * cw).sum(-1) / V
    z = c["lse_square_scale"] * lse**2
    if c["reduction"] == "mean":
        per = per / ((cw[y] * mask).sum() if c["ce_weight"] else mask.sum())
        z = z / mask.sum().clamp_min(1)
    per = per + z
    if c["use_token_scaling"]:
        scale = torch.softmax(logits.detach(), -1).gather(1, y[:, None]).squeeze(1)
        per, z = per * scale, z * scale
    per, z = torch.where(mask, per, 0.0), torch.where(mask, z, 0.0)
    loss = per if c["reduction"] == "none" else per.sum()
    upstream = t["token_grad"].to(f64) if c["reduction"] == "none" else torch.full_like(loss, c["grad_output"])
    loss.backward(upstream)
    out = {"loss": loss.detach(), "grad_input": x.grad, "grad_weight": w.grad}
    if c["return_z_loss"]:
        out["z_loss"] = z if c["reduction"] == "none" else z.sum()
    pred = torch.where(mask, logits.argmax(-1), -1)
    if c["return_predicted_tokens"]:
        out["predicted_tokens"] = pred
    if c["return_token_accuracy"]:
        acc = (pred == tgt).double()
        out["token_accuracy"] = acc if c["reduction"] == "none" else acc.sum() / mask.sum()
    if b is not None:
        out["grad_bias"] = b.grad
    return out


def rel_err(a, b):
    a, b = a.double(), b.double().to(a.device)
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def worst(outputs, ref):
    """Largest relative error over every output the reference has (missing -> inf)."""
    return max(rel_err(outputs[k], ref[k]) if k in outputs else float("inf") for k in ref)


def run(subject, mode, backend=None, **overrides):
    c = casegen.case(device=DEVICE, **overrides)
    t = casegen.tensors(c)
    return c, t, runner.run(c, t, subject, mode, backend)


def signature_of(r):
    if r["status"] != "error":
        return ""
    return signatures.classify(r["error"]["chain"], TABLE) or "unknown:" + r["error"]["chain"][-1]["message"][:60]


def check(label, fn):
    global failures
    t0 = time.perf_counter()
    try:
        ok, r, detail = fn()
    except Exception as e:  # a broken check is a failed check, not a crash
        ok, r, detail = False, {"status": "-"}, f"check raised {type(e).__name__}: {e}"
    ms = (time.perf_counter() - t0) * 1e3
    failures += not ok
    sig = signature_of(r) if r.get("status") else ""
    rows.append((label, "PASS" if ok else "FAIL", r.get("status", "-"), sig, ms, detail))
    print(f"{rows[-1][1]:4s}  {label:58s} {rows[-1][2]:11s} {ms:8.0f} ms  {rows[-1][3]} {detail}", flush=True)


def expect_ok_close(subject, mode, tol, backend=None, **case):
    def fn():
        c, t, r = run(subject, mode, backend, **case)
        if r["status"] != "ok":
            return False, r, r.get("reason") or signature_of(r)
        e = worst(r["outputs"], reference(c, t))
        return e < tol, r, f"max rel err vs fp64 {e:.1e} (tol {tol:.0e})"
    return fn


def expect_error(subject, mode, sig_ids, backend=None, **case):
    def fn():
        _, _, r = run(subject, mode, backend, **case)
        sig = signature_of(r)
        ok = r["status"] == "error" and sig in sig_ids
        phase = r.get("error", {}).get("phase", "")
        return ok, r, f"expected {'/'.join(sig_ids) or '(none here)'}; phase {phase}"
    return fn


def expect_status(subject, mode, status, **case):
    def fn():
        _, _, r = run(subject, mode, **case)
        return r["status"] == status, r, r.get("reason", "")
    return fn


def planted_differs(bug, measure, threshold, **case):
    def fn():
        _, _, base = run("model", "eager", **case)
        _, _, r = run(bug, "eager", **case)
        if r["status"] != "ok" or base["status"] != "ok":
            return False, r, "a run failed"
        d = measure(r["outputs"], base["outputs"])
        return d > threshold, r, f"deviation from model {d:.1e} (> {threshold:.0e})"
    return fn


def bf16_precision_in_fp32(bug_out, base_out):
    """1 if the bug's fp32 grad_weight carries only bf16 precision while model's does not."""
    def is_bf16(t):
        return t.dtype == torch.float32 and bool((t == t.bfloat16().float()).all())
    return float(is_bf16(bug_out["grad_weight"]) and not is_bf16(base_out["grad_weight"]))


def crash_subprocess(subject, timeout):
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from flce_subjects import runner, casegen\n"
            "c = casegen.case(**%r); runner.run(c, casegen.tensors(c), %r, 'eager')\n"
            "print('returned')") % (HERE, FP32, subject)
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout)
        return p.returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def main():
    global DEVICE
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    DEVICE = ap.parse_args().device
    cpu = DEVICE == "cpu"
    print(f"torch {torch.__version__}, device {DEVICE}; compiled addmm.dtype_out should fail with: "
          f"{ADDMM_COMPILE_FAILURES or 'nothing (fixed here)'}\n")
    aot = {"backend": "aot_eager"}
    bf16_fp32acc = dict(accum_dtype="fp32")

    check("model eager fp32, all options, mean", expect_ok_close("model", "eager", 1e-5, **FP32, **FULL_OPTIONS))
    check("model eager fp32, all options, sum", expect_ok_close(
        "model", "eager", 1e-5, **FP32, **FULL_OPTIONS, reduction="sum", grad_output=0.7))
    check("model eager fp32, all options, none (token grads)", expect_ok_close(
        "model", "eager", 1e-5, **FP32, **FULL_OPTIONS, reduction="none"))
    check("model eager all-ignored mean -> loss 0", lambda: (
        lambda r: (r[2]["status"] == "ok" and r[2]["outputs"]["loss"].item() == 0.0, r[2], "loss 0"))(
        run("model", "eager", **FP32, ignore_fraction=1.0)))
    check("model compiled aot_eager fp32, all options, extra_BT", expect_ok_close(
        "model", "compiled", 1e-5, **FP32, **FULL_OPTIONS, compile=aot, extra_BT=[4, 6]))
    check("model eager bf16 accum fp32", expect_ok_close("model", "eager", 3e-2, **bf16_fp32acc))
    check("model compiled inductor bf16 accum fp32 -> trace failure", expect_error(
        "model", "compiled", ADDMM_COMPILE_FAILURES, **bf16_fp32acc))
    check("model compiled inductor bf16 accum none", expect_ok_close("model", "compiled", 3e-2))
    check("model-dtype-out compiled inductor bf16 accum none -> failure", expect_error(
        "model-dtype-out", "compiled", ADDMM_COMPILE_FAILURES))
    check("model+workaround compiled inductor bf16 accum fp32", expect_ok_close(
        "model+workaround", "compiled", 3e-2, **bf16_fp32acc))
    check("model+workaround compiled aot_eager bf16 accum fp32", expect_ok_close(
        "model+workaround", "compiled", 3e-2, **bf16_fp32acc, compile=aot))

    op = dict(kind="addmm", accum_dtype="fp32", out_variant=True)
    if cpu:
        check("aten-dtype-out addmm out= eager -> no CPU kernel", expect_error(
            "aten-dtype-out", "eager", ["op-not-implemented-on-device"], **op))
    check("aten-dtype-out addmm out= compiled inductor -> failure", expect_error(
        "aten-dtype-out", "compiled", ADDMM_COMPILE_FAILURES, **op))

    def raw_with_workaround():
        c, t, r = run("aten-dtype-out+workaround", "compiled", **op)
        if r["status"] != "ok":
            return False, r, signature_of(r)
        out = r["outputs"]["out"]
        e = rel_err(out, t["c"].double() + t["a"].double() @ t["b"].double())
        return out.dtype == torch.float32 and e < 1e-5, r, f"{out.dtype}, max rel err vs fp64 {e:.1e}"
    check("aten-dtype-out+workaround addmm out= compiled inductor", raw_with_workaround)

    native = dict(**FP32, bias=True, ce_weight=True, ignore_fraction=0.25)
    if hasattr(torch.nn.functional, "linear_cross_entropy"):
        check("torch-native eager fp32 mean", expect_ok_close("torch-native", "eager", 1e-5, **native))
        check("torch-native eager fp32 none, label smoothing (reference)", expect_ok_close(
            "torch-native", "eager", 1e-5, **native, reduction="none", label_smoothing=0.1))
    else:
        check("torch-native without linear_cross_entropy -> unsupported", expect_status(
            "torch-native", "eager", "unsupported", **native))
    check("torch-native z-loss -> unsupported", expect_status(
        "torch-native", "eager", "unsupported", return_z_loss=True))
    if cpu:
        check("liger on CPU -> unsupported", expect_status("liger", "eager", "unsupported"))
    else:
        check("liger eager bf16 accum fp32 (CUDA)", expect_ok_close("liger", "eager", 3e-2, **bf16_fp32acc))
        check("liger eager fp32, all options, mean (CUDA)", expect_ok_close(
            "liger", "eager", 1e-4, **FP32, **FULL_OPTIONS))

    check("planted model-bug-smoothing (loss)", planted_differs(
        "model-bug-smoothing", lambda a, b: rel_err(a["loss"], b["loss"]), 1e-4, **FP32, label_smoothing=0.1))
    check("planted model-bug-drop-chunk (grad_input)", planted_differs(
        "model-bug-drop-chunk", lambda a, b: rel_err(a["grad_input"], b["grad_input"]), 1e-2, **FP32))
    check("planted model-bug-bf16-accum (fp32 grad with bf16 precision)", planted_differs(
        "model-bug-bf16-accum", bf16_precision_in_fp32, 0.5, **FP32, autocast="bf16", BT=64, V=128))

    def never_raises():
        r = runner.run({}, {}, "model", "eager")
        chain = r.get("error", {}).get("chain", [])
        ok = r["status"] == "error" and chain and all(":" in f for link in chain for f in link["frames"])
        return ok, r, f"phase {r.get('error', {}).get('phase')}: {chain[-1]['type'] if chain else '-'}"
    check("runner.run on a broken case returns an error record", never_raises)
    check("segfault subject kills its process (SIGSEGV)", lambda: (
        lambda rc: (rc == -11, {"status": str(rc)}, "returncode"))(crash_subprocess("segfault", 60)))
    check("hang subject never returns", lambda: (
        lambda rc: (rc == "timeout", {"status": str(rc)}, "killed after 10 s"))(crash_subprocess("hang", 10)))

    print(f"\n{len(rows) - failures}/{len(rows)} expectations met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
