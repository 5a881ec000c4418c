"""A Python stand-in for flce's case defaults and input generation (self-checks only).

flce (C++, case/inputs.cpp) owns the real generator (Philox streams, value regimes); this one
only has to produce tensors with the documented names, shapes, dtypes and devices.
"""
import copy

import torch

from . import dtypes

DEFAULT_CASE = {
    "schema_version": 1, "kind": "flce", "BT": 8, "H": 16, "V": 32, "batch": 1, "out_variant": True,
    "input_dtype": "bf16", "weight_dtype": "bf16", "accum_dtype": "none",
    "bias": False, "ce_weight": False, "ignore_index": -100, "ignore_fraction": 0.0,
    "label_smoothing": 0.0, "lse_square_scale": 0.0, "softcap": None, "reduction": "mean",
    "grad_output": 1.0, "token_grad": "random", "return_z_loss": False,
    "return_token_accuracy": False, "return_predicted_tokens": False, "use_token_scaling": False,
    "requires_grad": {"input": True, "weight": True, "bias": False}, "autocast": "none", "device": "cpu",
    "compile": {"backend": "inductor", "fullgraph": False, "dynamic": None,
                "capture_scalar_outputs": True, "mode": "default"},
    "extra_BT": [], "regime": "normal", "semantics": "liger", "seed": 0,
}


def case(**overrides):
    """DEFAULT_CASE with overrides; nested dicts (compile, requires_grad) are merged."""
    c = copy.deepcopy(DEFAULT_CASE)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(c.get(key), dict):
            c[key].update(value)
        else:
            c[key] = value
    if c["bias"] and "requires_grad" not in overrides:
        c["requires_grad"]["bias"] = True
    return c


def _flce_tensors(c, g, dev, bt, suffix, out):
    x_dt = dtypes.of(c["input_dtype"])
    H, V = c["H"], c["V"]
    out["x" + suffix] = torch.randn(bt, H, generator=g).to(dev, x_dt)
    target = torch.randint(0, V, (bt,), generator=g)
    target[torch.rand(bt, generator=g) < c["ignore_fraction"]] = c["ignore_index"]
    out["target" + suffix] = target.to(dev)
    if c["token_grad"] == "log_spread":  # 1e-4 .. 1e4, log-uniform (flce's draws 2^-14 .. 2^14)
        tg = 10.0 ** (8 * torch.rand(bt, generator=g) - 4)
    else:
        tg = torch.randn(bt, generator=g) if c["token_grad"] == "random" else torch.ones(bt)
    out["token_grad" + suffix] = tg.to(dev)


def tensors(c):
    g = torch.Generator().manual_seed(int(c["seed"]))
    dev = torch.device(c["device"])
    out = {}
    BT, H, V = c["BT"], c["H"], c["V"]
    if c["kind"] == "flce":
        w_dt = dtypes.of(c["weight_dtype"])
        out["w"] = (torch.randn(V, H, generator=g) / H**0.5).to(dev, w_dt)
        if c["bias"]:
            out["bias"] = (0.1 * torch.randn(V, generator=g)).to(dev, w_dt)
        if c["ce_weight"]:
            out["ce_weight"] = (0.5 + torch.rand(V, generator=g)).to(dev, torch.float32)
        for bt in c["extra_BT"]:
            _flce_tensors(c, g, dev, bt, f"@{bt}", out)
        _flce_tensors(c, g, dev, BT, "", out)
        return out
    batch = (c["batch"],) if c["kind"] in ("bmm", "baddbmm") else ()
    in_dt = dtypes.of(c["input_dtype"])
    out["a"] = torch.randn(*batch, V, BT, generator=g).to(dev, in_dt)
    out["b"] = torch.randn(*batch, BT, H, generator=g).to(dev, in_dt)
    if c["kind"] in ("addmm", "baddbmm"):
        out["c"] = torch.randn(*batch, V, H, generator=g).to(dev, dtypes.op_out_dtype(c))
    return out
