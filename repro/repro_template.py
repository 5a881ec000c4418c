#!/usr/bin/env python3
"""Standalone reproducer written by `flce repro --emit-python`.

Runs one flce case -- a fused linear cross entropy call (or one op of the aten dtype_out
family) -- through the subject eagerly and then under torch.compile, forward and backward,
classifies any failure against the known signatures flce knows, and says whether the
expected outcome shows up. The inputs are generated here bit for bit as flce generates them
(a port of flce's case/philox.hpp, gen.hpp and inputs.cpp); flce is not needed. All that
is case-specific is the JSON document in PAYLOAD, parsed at run time.

  python repro.py                  exit 0 REPRODUCED, 1 NOT REPRODUCED, 2 SKIP (cannot show it here)
  python repro.py --dump-inputs F  write the generated values (fp32 bits, one line per tensor) to F
  python repro.py --dump-tensors F write the tensors as the subject gets them (storage-dtype bits) to F
  python repro.py --verbose        keep torch's logs and print whole exception chains
"""
import contextlib
import importlib
import io
import json
import logging
import math
import os
import platform
import re
import sys
import types
import warnings

PAYLOAD = json.loads(
    "@PAYLOAD@"
)
CASE = PAYLOAD["case"]
SUBJECT = PAYLOAD["subject"]
SUBJECT_PATH = PAYLOAD["subject_path"]
EXPECT = PAYLOAD["expect"]  # [{"torch": range, "device": any|cpu|cuda, "outcome": ...}]; [] = any failure
SIGNATURES = PAYLOAD["signatures"]  # flce's judge/signatures.json: ids and patterns
GOLDEN = PAYLOAD["golden"]  # flce's fp64 outputs and error bounds (numeric findings), or None
# A sequence case: calls run first, in order, in this process, through the same compiled
# functions as CASE (one per graph configuration and backend, as flce's runner caches them).
EARLIER = PAYLOAD.get("earlier", [])
# What the runner's compiled-function cache ignores (runner.py _cache_key): calls differing only
# in these share one compiled function.
NOT_GRAPH = ("BT", "H", "V", "batch", "seed", "extra_BT", "regime", "semantics", "ignore_fraction", "grad_output",
             "token_grad")

LADDER = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
WORKAROUND_SUFFIX = "+workaround"
# flce's own subjects live in flce_subjects (put <flce>/subjects on PYTHONPATH to run them).
FLCE_SUBJECT_MODULES = {
    "model": "flce_subjects.model",
    "model-bug-smoothing": "flce_subjects.bug_smoothing",
    "model-bug-bf16-accum": "flce_subjects.bug_bf16_accum",
    "model-bug-drop-chunk": "flce_subjects.bug_drop_chunk",
    "model-bug-second-shape": "flce_subjects.bug_second_shape",
    "model-bug-trace-error": "flce_subjects.bug_trace_error",
    "model-bug-token-grad-rows": "flce_subjects.bug_token_grad_rows",
    "model-bug-autocast-no-bias": "flce_subjects.bug_autocast_no_bias",
    "model-bug-input-no-grad": "flce_subjects.bug_input_no_grad",
    "model-bug-two-causes": "flce_subjects.bug_two_causes",
    "model-dtype-out": "flce_subjects.model_dtype_out",
    "model-approx-filter": "flce_subjects.approx_filter",
    "model-bug-filter-overreach": "flce_subjects.bug_filter_overreach",
    "segfault": "flce_subjects.crash_segfault",
    "hang": "flce_subjects.crash_hang",
    "cuda-oob": "flce_subjects.crash_cuda_oob",
    "unsloth": "flce_subjects.unsloth",  # not ported yet: the script needs flce's subjects on PYTHONPATH
}
# Failures that need the out_dtype overloads (aten.addmm.dtype_out and its family).
DTYPE_OUT_SIGNATURES = {
    "tier1-decomposition", "tier1-baddbmm-decomposition", "tier2-lowering", "op-not-implemented-on-device",
    "out-dtype-unsupported", "out-dtype-invalid", "out-tensor-dtype-mismatch",
}
VERBOSE = "--verbose" in sys.argv


class Skip(Exception):
    """This environment cannot show the failure (exit 2)."""


# ---------------------------------------------------------------- versions (flce's rules)
def version_tuple(text):
    """'2.13.0+cu130' -> (2, 13, 0); reads leading numbers like flce's version_in_range."""
    m = re.match(r"([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?", text.strip())
    return tuple(int(g) for g in m.groups(default="0")) if m else (0, 0, 0)


def in_range(version, spec):
    """'>=2.8,<2.13' style ranges; an empty spec matches every version."""
    v = version_tuple(version)
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        op = re.match(r"[<>=!]*", part).group(0)
        r = version_tuple(part[len(op):])
        ok = {">=": v >= r, ">": v > r, "<=": v <= r, "<": v < r, "!=": v != r}.get(op, v == r)
        if not ok:
            return False
    return True


def lower_bound(spec):
    bounds = [version_tuple(p.strip()[2:] if p.strip().startswith(">=") else p.strip()[1:])
              for p in (spec or "").split(",") if p.strip().startswith(">")]
    return max(bounds) if bounds else None


# ---------------------------------------------------------------- environment
def package_version(name, fallback):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return fallback


def print_environment(torch):
    print(f"OS: {platform.platform()}")
    print(f"Python: {platform.python_version()}")
    print(f"PyTorch: {torch.__version__}")
    print(f"Liger: {package_version('liger-kernel', 'not installed')}")
    print(f"Triton: {package_version('triton', 'not installed')}")
    print(f"CUDA: {torch.version.cuda or 'not built'}")
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        print(f"GPU: {torch.cuda.get_device_name()} (compute capability {major}.{minor})")
    else:
        print("GPU: none")


def describe(c):
    shape = f"BT={c['BT']} H={c['H']} V={c['V']}" + (f" batch={c['batch']}" if c["kind"] in ("bmm", "baddbmm") else "")
    flags = [k for k in ("bias", "ce_weight", "return_z_loss", "return_token_accuracy", "return_predicted_tokens",
                         "use_token_scaling") if c.get(k)]
    for k, default in (("label_smoothing", 0), ("lse_square_scale", 0), ("softcap", None), ("ignore_fraction", 0)):
        if c.get(k) != default:
            flags.append(f"{k}={c[k]}")
    cc = c["compile"]
    return (f"{c['kind']} {shape} {c['input_dtype']}/{c['weight_dtype']} accum {c['accum_dtype']}, reduction "
            f"{c['reduction']}, regime {c['regime']}, {c['device']}, seed {c['seed']}"
            + (f", {' '.join(flags)}" if flags else "")
            + f"; torch.compile(backend={cc['backend']}, fullgraph={cc['fullgraph']}, dynamic={cc['dynamic']}, "
              f"mode={cc['mode']}), capture_scalar_outputs={cc['capture_scalar_outputs']}")


# ---------------------------------------------------------------- inputs: flce's generator
# Philox4x32-10 (Salmon et al., SC'11), counter (index lo, index hi, stream, "flce"), key = seed.
M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF
STREAM = {"x": 1, "w": 2, "bias": 3, "ce_weight": 4, "target": 5, "token_grad": 6, "special": 7, "op_a": 8, "op_c": 9,
          "confident": 10, "one_class": 11}


def philox(np, seed, stream, index):
    u = np.uint64
    index = np.asarray(index, dtype=u)
    c0, c1 = index & u(MASK32), index >> u(32)
    c2, c3 = np.full_like(index, stream), np.full_like(index, 0x666C6365)
    k0, k1 = seed & MASK32, (seed >> 32) & MASK32
    for _ in range(10):
        p0, p1 = c0 * u(M0), c2 * u(M1)  # 32x32 -> 64 bits: exact in uint64
        c0, c1, c2, c3 = (p1 >> u(32)) ^ c1 ^ u(k0), p1 & u(MASK32), (p0 >> u(32)) ^ c3 ^ u(k1), p0 & u(MASK32)
        k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
    return c0, c1, c2, c3


def gauss(np, r):
    """Sum of four 22-bit uniforms, centred, times 2^-22: exact in fp32."""
    s = ((r[0] >> np.uint64(10)) + (r[1] >> np.uint64(10)) + (r[2] >> np.uint64(10)) + (r[3] >> np.uint64(10)))
    return (s.astype(np.int64) - (1 << 23)).astype(np.float32) * np.float32(1.0 / 4194304.0)


def unit(np, w):
    return (w >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)


def round_bf16(np, v):
    """fp32 -> bf16 -> fp32, round to nearest even on the bits (flce's f32_to_bf16_bits)."""
    u = v.view(np.uint32).astype(np.uint64)
    nan = (u & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000)
    lsb = (u >> np.uint64(16)) & np.uint64(1)
    h = np.where(nan, (u >> np.uint64(16)) | np.uint64(0x40), (u + np.uint64(0x7FFF) + lsb) >> np.uint64(16))
    return ((h & np.uint64(0xFFFF)) << np.uint64(16)).astype(np.uint32).view(np.float32)


def round_fp16(np, v):
    """fp32 -> binary16 -> fp32, round to nearest even incl. subnormals (flce's f32_to_f16_bits)."""
    u64 = np.uint64
    u = v.view(np.uint32).astype(u64)
    sign = (u >> u64(16)) & u64(0x8000)
    a = u & u64(0x7FFFFFFF)
    normal = (a + u64(0xFFF) + ((a >> u64(13)) & u64(1)) - np.minimum(a, u64(0x38000000))) >> u64(13)
    e = a >> u64(23)
    m = (a & u64(0x7FFFFF)) | u64(0x800000)
    shift = np.clip(u64(126) - np.minimum(e, u64(126)), u64(1), u64(31))
    q = m >> shift
    rem = m & ((u64(1) << shift) - u64(1))
    half = u64(1) << (shift - u64(1))
    q = q + ((rem > half) | ((rem == half) & ((q & u64(1)) == u64(1)))).astype(u64)
    h = np.where(a > u64(0x7F800000), u64(0x7E00),
        np.where(a >= u64(0x477FF000), u64(0x7C00),
        np.where(a >= u64(0x38800000), normal,
        np.where(a < u64(0x33000000), u64(0), q))))
    return (sign | h).astype(np.uint16).view(np.float16).astype(np.float32)


def round_to(np, dtype, v):
    return round_bf16(np, v) if dtype == "bf16" else round_fp16(np, v) if dtype == "fp16" else v


class Generator:
    """flce's GenSpec for a case (and a BT override for extra_BT shapes)."""

    def __init__(self, np, c, bt=None):
        self.np, self.c = np, c
        self.seed, self.BT, self.H, self.V = int(c["seed"]), int(bt or c["BT"]), int(c["H"]), int(c["V"])
        e = (self.H.bit_length() - 1) // 2  # W ~ 2^-e with 2^e ~ sqrt(H)
        large = c["regime"] == "large_logits"
        self.w_scale = np.float32(2.0 ** -e)
        self.x_scale = np.float32(64.0 if large else 2.0)
        self.b_scale = np.float32(32.0 if large else 0.5)
        self.ignore_threshold = int(float(c["ignore_fraction"]) * 4294967296.0)
        # confident: row i adds alpha_i W_t, alpha_i = (bits + u_i) * nat, u_i in [1, 20] (flce's gen.hpp)
        self.confident_bits = np.float32(max(self.V - 1, 0).bit_length())
        w = float(self.w_scale)
        self.confident_nat = np.float32(
            0.6931471805599453 * 3.0 / (float(self.H) * w * w) * (1.0 + 1.0 / math.sqrt(self.H))
        )
        self.one_class = -1
        if c["regime"] == "one_class":
            r = philox(np, self.seed, STREAM["one_class"], 0)
            self.one_class = int((int(r[0]) * self.V) >> 32)

    def draw(self, stream, index):
        return philox(self.np, self.seed, STREAM[stream], index)

    def target(self, rows):
        np = self.np
        r = self.draw("target", rows)
        t = ((r[0] * np.uint64(self.V)) >> np.uint64(32)).astype(np.int64)
        if self.one_class >= 0:
            t = np.full_like(t, self.one_class)
        return np.where(r[1] < np.uint64(self.ignore_threshold), np.int64(self.c["ignore_index"]), t)

    def weight(self, j, k):
        g = gauss(self.np, self.draw("w", j * self.np.uint64(self.H) + k)) * self.w_scale
        return round_to(self.np, self.c["weight_dtype"], g)

    def input(self, i, k):
        np = self.np
        idx = i * np.uint64(self.H) + k
        v = gauss(np, self.draw("x", idx)) * self.x_scale
        if self.c["regime"] == "confident":
            t = self.target(i)
            ok = (t >= 0) & (t < self.V)
            u = np.float32(1.0) + np.float32(19.0) * unit(np, self.draw("confident", i)[0])
            alpha = (self.confident_bits + u) * self.confident_nat
            w = self.weight(np.where(ok, t, 0).astype(np.uint64), k) * alpha
            v = np.where(ok, v + w, v)
        if self.c["regime"] == "special_values":
            s = self.draw("special", idx)
            which = s[1] % np.uint64(3)
            special = np.where(which == 0, np.uint32(0x7FC00000),
                               np.where(which == 1, np.uint32(0x7F800000), np.uint32(0xFF800000))).view(np.float32)
            v = np.where((s[0] & np.uint64(63)) == 0, special, v)
        return round_to(np, self.c["input_dtype"], v.astype(np.float32))

    def upstream(self, stream, n, spread=False):
        """0.5 + unit, or (spread) (1 + unit) * 2^e with e uniform in [-14, 13] (flce's gen_log_spread)."""
        np = self.np
        r = self.draw(stream, np.arange(n, dtype=np.uint64))
        if not spread:
            return np.float32(0.5) + unit(np, r[0])
        e = (r[1] % np.uint64(28)).astype(np.int64) - 14
        p2 = ((e + 127).astype(np.uint32) << np.uint32(23)).view(np.float32)
        return (np.float32(1.0) + unit(np, r[0])) * p2


def op_out_dtype(c):
    return c["accum_dtype"] if c["accum_dtype"] != "none" else c["input_dtype"]


def generate(np, c):
    """name -> (numpy array of the values, dtype name, shape): what flce hands the subject."""
    u = np.uint64
    out = {}
    if c["kind"] != "flce":
        g, B, BT, H, V = Generator(np, c), int(c["batch"]), int(c["BT"]), int(c["H"]), int(c["V"])
        batched = c["kind"] in ("bmm", "baddbmm")
        sh = (lambda a, b: (B, a, b)) if batched else (lambda a, b: (a, b))
        b_, m_, k_ = (np.arange(n, dtype=u).reshape(s) for n, s in ((B, (-1, 1, 1)), (V, (1, -1, 1)), (BT, (1, 1, -1))))
        a_values = gauss(np, g.draw("op_a", (b_ * u(V) + m_) * u(BT) + k_)) * np.float32(0.0625)
        a = round_to(np, c["input_dtype"], a_values)
        out["a"] = (a, c["input_dtype"], sh(V, BT))
        rows = np.arange(B * BT, dtype=u).reshape(-1, 1)
        out["b"] = (g.input(rows, np.arange(H, dtype=u).reshape(1, -1)), c["input_dtype"], sh(BT, H))
        if c["kind"] in ("addmm", "baddbmm"):
            n_ = np.arange(H, dtype=u).reshape(1, 1, -1)
            cc = round_to(np, op_out_dtype(c), gauss(np, g.draw("op_c", (b_ * u(V) + m_) * u(H) + n_)))
            out["c"] = (cc, op_out_dtype(c), sh(V, H))
        return out

    def per_token(bt, suffix):
        g = Generator(np, c, bt)
        rows = np.arange(bt, dtype=u).reshape(-1, 1)
        out["x" + suffix] = (g.input(rows, np.arange(g.H, dtype=u).reshape(1, -1)), c["input_dtype"], (bt, g.H))
        out["target" + suffix] = (g.target(np.arange(bt, dtype=u)), "int64", (bt,))
        spread = c["token_grad"] == "log_spread"
        tg = np.ones(bt, np.float32) if c["token_grad"] == "ones" else g.upstream("token_grad", bt, spread)
        out["token_grad" + suffix] = (tg, "fp32", (bt,))

    per_token(int(c["BT"]), "")
    for bt in c["extra_BT"]:
        per_token(int(bt), f"@{bt}")
    g, H, V = Generator(np, c), int(c["H"]), int(c["V"])
    w = g.weight(np.arange(V, dtype=u).reshape(-1, 1), np.arange(H, dtype=u).reshape(1, -1))
    out["w"] = (w, c["weight_dtype"], (V, H))
    if c["bias"]:
        b = gauss(np, g.draw("bias", np.arange(V, dtype=u))) * g.b_scale
        out["bias"] = (round_to(np, c["weight_dtype"], b), c["weight_dtype"], (V,))
    if c["ce_weight"]:
        out["ce_weight"] = (g.upstream("ce_weight", V, c["regime"] == "weight_spread"), "fp32", (V,))
    return out


def torch_dtype(torch, name):
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int64": torch.int64}[name]


def make_tensors(torch, np, c):
    """The case's tensors on its device: fp32 staging values converted to the storage dtype, as flce does."""
    dev = torch.device(c["device"])
    tensors, dtypes = {}, {}
    for name, (values, dtype, shape) in generate(np, c).items():
        t = torch.from_numpy(np.ascontiguousarray(values).reshape(shape))
        tensors[name] = t.to(dev) if dtype == "int64" else t.to(dev, torch_dtype(torch, dtype))
        dtypes[name] = dtype
    return tensors, dtypes


def dump_line(name, dtype, shape, array):
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return f"{name} {dtype} {','.join(str(int(s)) for s in shape)} {little.tobytes().hex()}\n"


def dump_inputs(np, c, path):
    """The generated values (fp32 bits, exact in the storage dtype): `flce repro --dump-inputs` prints the same."""
    with open(path, "w") as f:
        for name, (values, dtype, shape) in sorted(generate(np, c).items()):
            f.write(dump_line(name, dtype, shape, np.ascontiguousarray(values).reshape(-1)))


def dump_tensors(torch, tensors, dtypes, path):
    """The tensors as the subject receives them (storage-dtype bits)."""
    bits = {"bf16": torch.int16, "fp16": torch.int16, "fp32": torch.int32, "int64": torch.int64}
    with open(path, "w") as f:
        for name in sorted(tensors):
            t = tensors[name].detach().cpu().contiguous()
            f.write(dump_line(name, dtypes[name], t.shape, t.view(bits[dtypes[name]]).numpy().reshape(-1)))


# ---------------------------------------------------------------- subjects
class Subject:
    def __init__(self, name, flce=None, op=None, version="", supports=None):
        self.name, self.flce, self.op, self.version = name, flce, op, version
        self.supports = supports or (lambda case: None)


def flce_only(case):
    return None if case["kind"] == "flce" else "op kinds are run by aten-dtype-out, not by an FLCE subject"


def aten_dtype_out(torch):
    """The raw op family, as flce's aten-dtype-out subject calls it (out= into c.clone() / a fresh tensor)."""
    ops = {"mm": torch.mm, "bmm": torch.bmm, "addmm": torch.addmm, "baddbmm": torch.baddbmm}

    def op(kind, a, b, c, out_dtype, out_variant):
        accumulating = kind in ("addmm", "baddbmm")
        args = (c, a, b) if accumulating else (a, b)
        if not out_variant:
            return ops[kind](*args, out_dtype=out_dtype)
        if accumulating:
            out = c.clone()
            args = (out, a, b)
        else:
            out = torch.empty((*a.shape[:-1], b.shape[-1]), dtype=out_dtype, device=a.device)
        return ops[kind](*args, out_dtype=out_dtype, out=out)

    def supports(case):
        return None if case["kind"] in ops else "aten-dtype-out runs the op kinds (mm/addmm/bmm/baddbmm), not kind=flce"

    return Subject("aten-dtype-out", op=op, version=f"aten {torch.__version__}", supports=supports)


# flce's torch-native paths (flce_subjects/torch_native_paths.py): name -> (chunked options, what).
TORCH_NATIVE_PATHS = {
    "torch-native": ({}, ""),
    "torch-native-reference": (None, "options=None (the reference path)"),
    "torch-native-accurate": ({"acc_policy": "accurate"}, "acc_policy='accurate'"),
    "torch-native-balanced": ({"acc_policy": "balanced"}, "acc_policy='balanced'"),
    "torch-native-chunk1": ({"batch_chunk_size": 1, "chunking_method": None}, "batch_chunk_size=1"),
}


def torch_native(torch, name="torch-native"):
    """torch.nn.functional.linear_cross_entropy, mapped as flce's torch-native subjects map it."""
    chunked, what = TORCH_NATIVE_PATHS[name]
    api = getattr(torch.nn.functional, "linear_cross_entropy", None)
    if api is None or not hasattr(torch.nn, "LinearCrossEntropyOptions"):
        raise Skip(f"torch {torch.__version__} has no torch.nn.functional.linear_cross_entropy (torch >= 2.13)")

    def supports(case):
        reason = flce_only(case)
        for key, what in (("return_z_loss", "z-loss"), ("lse_square_scale", "z-loss"),
                          ("use_token_scaling", "token scaling"), ("return_token_accuracy", "token accuracy"),
                          ("return_predicted_tokens", "predicted tokens")):
            reason = reason or (case.get(key) and f"option {what} not supported by torch-native")
        reason = reason or (case.get("softcap") is not None and "option softcap not supported by torch-native")
        low = case["autocast"] != "none" or case["input_dtype"] != "fp32"
        if not reason and case.get("ce_weight") and case.get("label_smoothing", 0) > 0 and low:
            reason = "option label_smoothing+ce_weight not supported by torch-native with fp16/bf16 logits"
        if not reason and case.get("ce_weight") and low and chunked is None:  # its weight must match the logits
            reason = ("option ce_weight not supported by the reference path with fp16/bf16 logits"
                      " (weight dtype must match)")
        return reason or None

    def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
             reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None, use_token_scaling=False,
             return_token_accuracy=False, return_predicted_tokens=False):
        options = None
        if label_smoothing == 0 and chunked is not None:  # acc_dtype None: torch's own default
            options = torch.nn.LinearCrossEntropyOptions(acc_dtype=accum_dtype, **chunked)
        loss = api(x, w, target, linear_bias=bias, weight=ce_weight, reduction=reduction, ignore_index=ignore_index,
                   label_smoothing=label_smoothing, options=options)
        return loss, None, None, None

    return Subject(name, flce=flce, supports=supports,
                   version=f"torch {torch.__version__} F.linear_cross_entropy" + (f", {what}" if what else ""))


def cce(torch, filter_eps=None):
    """cut-cross-entropy's linear_cross_entropy, exact (filter_eps=None), as flce's cce subject maps it."""
    try:
        from cut_cross_entropy import linear_cross_entropy
    except Exception as e:
        raise Skip(f"cannot import cut_cross_entropy: {type(e).__name__}: {e}") from e
    names = {"bias": "bias", "ce_weight": "class weights", "label_smoothing": "label smoothing",
             "lse_square_scale": "z-loss", "return_z_loss": "z-loss", "accum_dtype": "accum_dtype",
             "use_token_scaling": "token scaling", "return_token_accuracy": "token accuracy",
             "return_predicted_tokens": "predicted tokens"}

    def supports(case):
        reason = flce_only(case)
        for key, what in names.items():
            value = case.get(key)
            reason = reason or (value not in (None, False, 0, 0.0, "none") and f"option {what} not supported by cce")
        fp32_embeddings = case["autocast"] != "none" or case["input_dtype"] == "fp32"
        if not reason and case["device"] == "cuda" and fp32_embeddings:
            reason = "cce backward requires bf16 or fp16 embeddings (an assertion in cce_backward.py)"
        return reason or None

    def flce(x, w, target, *, ignore_index=-100, reduction="mean", softcap=None, **_):
        impl = "cce" if x.is_cuda else "torch_compile"
        loss = linear_cross_entropy(x, w, target, ignore_index=ignore_index, softcap=softcap, reduction=reduction,
                                    filter_eps=filter_eps, impl=impl)
        return loss, None, None, None

    version = f"cut-cross-entropy {package_version('cut-cross-entropy', 'unknown')}"
    if filter_eps is None:
        return Subject("cce", flce=flce, version=version, supports=supports)
    return Subject("cce-default", flce=flce, version=f"{version}, filter_eps={filter_eps!r} (its default)",
                   supports=supports)


def liger(torch):
    if not torch.cuda.is_available() or torch.version.hip is not None:
        raise Skip("subject liger needs NVIDIA CUDA (its kernels are Triton GPU kernels)")
    try:
        from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy
    except Exception as e:
        raise Skip(f"cannot import liger_kernel: {type(e).__name__}: {e}") from e

    def flce(x, w, target, **options):
        out = liger_fused_linear_cross_entropy(x, w, target, **options)
        if isinstance(out, torch.Tensor):
            return out, None, None, None
        return out.loss, out.z_loss, out.token_accuracy, out.predicted_tokens

    def supports(case):
        return flce_only(case) or (case["device"] != "cuda" and "liger needs a case with device cuda") or None

    return Subject("liger", flce=flce, version=f"liger-kernel {package_version('liger-kernel', 'source checkout')}",
                   supports=supports)


def from_object(name, obj, module):
    """flce's plug-in rule: an object/module with flce/op (+version/supports), or a bare flce callable."""
    flce, op = getattr(obj, "flce", None), getattr(obj, "op", None)
    if flce is None and op is None and callable(obj):
        flce = obj
    if flce is None and op is None:
        raise Skip(f"subject {name!r}: {obj!r} has neither flce nor op")
    version = getattr(obj, "version", None) or getattr(module, "version", None)
    try:
        if version:
            version = str(version())
        else:
            version = str(getattr(module, "__version__", getattr(module, "__name__", "plugin")))
    except Exception as e:
        version = f"unknown ({type(e).__name__}: {e})"
    return Subject(name, flce=flce, op=op, version=version, supports=getattr(obj, "supports", None))


def load_subject(torch, name):
    if SUBJECT_PATH:
        sys.path.insert(0, os.path.abspath(SUBJECT_PATH))
    if name == "aten-dtype-out":
        return aten_dtype_out(torch)
    if name in TORCH_NATIVE_PATHS:
        return torch_native(torch, name)
    if name == "liger":
        return liger(torch)
    if name == "cce":
        return cce(torch)
    if name == "cce-default":
        return cce(torch, "high")
    module_name, _, attr = FLCE_SUBJECT_MODULES.get(name, name).partition(":")
    try:
        module = importlib.import_module(module_name)
        obj = getattr(module, attr) if attr else module
    except Exception as e:
        hint = " (flce's own subjects: put <flce>/subjects on PYTHONPATH)" if name in FLCE_SUBJECT_MODULES else ""
        raise Skip(f"cannot import subject {name!r}: {type(e).__name__}: {e}{hint}") from e
    return from_object(name, obj, module)


def workaround(active):
    if not active:
        return contextlib.nullcontext()
    try:
        import flce_workaround
    except Exception as e:
        raise Skip(f"subject asks for +workaround but flce_workaround cannot be imported: {e}") from e
    return flce_workaround.enabled()


# ---------------------------------------------------------------- running (as flce's runner does)
def flce_options(torch, c):
    return dict(
        ignore_index=int(c["ignore_index"]), lse_square_scale=float(c["lse_square_scale"]),
        label_smoothing=float(c["label_smoothing"]), reduction=c["reduction"],
        softcap=None if c["softcap"] is None else float(c["softcap"]), return_z_loss=bool(c["return_z_loss"]),
        accum_dtype=None if c["accum_dtype"] == "none" else torch_dtype(torch, c["accum_dtype"]),
        use_token_scaling=bool(c["use_token_scaling"]), return_token_accuracy=bool(c["return_token_accuracy"]),
        return_predicted_tokens=bool(c["return_predicted_tokens"]),
    )


def make_forward(torch, subject, c):
    if c["kind"] == "flce":
        flce, options = subject.flce, flce_options(torch, c)

        def forward(x, w, target, bias, ce_weight):
            return flce(x, w, target, bias=bias, ce_weight=ce_weight, **options)
    else:
        op, kind, out_variant = subject.op, c["kind"], bool(c["out_variant"])
        out_dtype = torch_dtype(torch, op_out_dtype(c))

        def forward(a, b, cc):
            return op(kind, a, b, cc, out_dtype, out_variant)
    return forward


def as_tuple(torch, result):
    if isinstance(result, torch.Tensor):
        return (result, None, None, None)
    if isinstance(result, (tuple, list)):
        return tuple(result) + (None,) * (4 - len(result))
    return tuple(getattr(result, n, None) for n in ("loss", "z_loss", "token_accuracy", "predicted_tokens"))


def run_once(torch, c, fn, tensors, suffix, phase):
    """One call, forward and (when gradients are wanted) backward, like flce's runner."""
    autocast = contextlib.nullcontext() if c["autocast"] == "none" else \
        torch.autocast(device_type=c["device"], dtype=torch_dtype(torch, c["autocast"]))
    if c["kind"] != "flce":
        phase[0] = "forward"
        with autocast:
            return {"out": fn(tensors["a" + suffix], tensors["b" + suffix], tensors.get("c" + suffix))}
    phase[0] = "setup"
    rg = c["requires_grad"]

    def leaf(t, wanted):
        return t.detach().requires_grad_() if t is not None and wanted and t.is_floating_point() else t

    x, w = leaf(tensors["x" + suffix], rg["input"]), leaf(tensors["w"], rg["weight"])
    bias = leaf(tensors["bias"], rg["bias"]) if c["bias"] else None
    ce_weight = tensors["ce_weight"] if c["ce_weight"] else None
    phase[0] = "forward"
    with autocast:
        results = as_tuple(torch, fn(x, w, tensors["target" + suffix], bias, ce_weight))
    loss = results[0]
    if any(t is not None and t.requires_grad for t in (x, w, bias)):
        phase[0] = "backward"
        if c["reduction"] == "none":
            upstream = tensors["token_grad" + suffix].to(loss.dtype)
        else:
            upstream = torch.full_like(loss, float(c["grad_output"]))
        torch.autograd.backward(loss, grad_tensors=upstream)
    outputs = {n: v for n, v in zip(("loss", "z_loss", "token_accuracy", "predicted_tokens"), results)
               if isinstance(v, torch.Tensor)}
    for n, leaf_ in (("grad_input", x), ("grad_weight", w), ("grad_bias", bias)):
        if leaf_ is not None and leaf_.requires_grad and leaf_.grad is not None:
            outputs[n] = leaf_.grad
    return outputs


def compile_fn(torch, fn, c, backend):
    fresh = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    cc = c["compile"]
    kwargs = {"backend": backend, "fullgraph": bool(cc["fullgraph"]), "dynamic": cc["dynamic"]}
    if backend == "inductor" and cc["mode"] not in (None, "default"):
        kwargs["mode"] = cc["mode"]
    return torch.compile(fresh, **kwargs)


def dynamo_config(torch, c):
    cfg = torch._dynamo.config
    wanted = {
        "capture_scalar_outputs": bool(c["compile"]["capture_scalar_outputs"]),
        "fail_on_recompile_limit_hit": True,  # never report a silent eager fallback as compiled
        "recompile_limit": max(getattr(cfg, "recompile_limit", 0), 64),
        "accumulated_recompile_limit": max(getattr(cfg, "accumulated_recompile_limit", 0), 4096),
    }
    return cfg.patch(**{k: v for k, v in wanted.items() if hasattr(cfg, k)})


@contextlib.contextmanager
def quiet():
    if VERBOSE:
        yield
        return
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)
