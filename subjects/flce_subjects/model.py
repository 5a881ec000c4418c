"""`model`: flce's own chunked fused linear cross entropy, in plain PyTorch ops.

It follows the shape of Liger's algorithm (liger_kernel/ops/fused_linear_cross_entropy.py)
so that it exercises the same torch features under torch.compile, while staying readable:
  * chunk over BT with Liger's chunk-size heuristic (logits never exceed ~BT x H);
  * per chunk: logits in the storage/autocast dtype, CE loss and d(loss)/d(logits) in fp32,
    the gradient rounded to the logits dtype (Liger writes it into the logits buffer);
  * gradients are computed in forward for mean/sum and scaled by the upstream scalar in
    backward; reduction="none" defers them to backward, where the per-token upstream
    gradient is folded in before the projections sum over tokens;
  * grad_weight is accumulated with torch.addmm(..., out_dtype=float32, out=grad_weight)
    when the accumulator is fp32 and the logits gradient is fp16/bf16 -- the call behind
    Liger issue #1327.

Semantics are Liger's: all-ignored mean -> loss 0 (token_accuracy 0/0 = NaN), z-loss not
class-weighted, label smoothing with class weights as in Liger PR #198, loss fp32, z_loss
in the input dtype, token_accuracy fp32, predicted_tokens int64 (-1 where ignored).

Variants (planted bugs, PR candidates) are the same code with one knob turned; see Variant.
"""
import dataclasses
from typing import NamedTuple, Optional

import torch

from . import paths

LOW_PRECISION = (torch.float16, torch.bfloat16)


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str = "model"
    smoothing_scale: float = 1.0  # planted bug sets 2: the smoothing term counted twice
    accum_in_logits_dtype: bool = False  # planted bug: fp32 accumulator silently low precision
    drop_last_chunk: bool = False  # planted bug: last chunk's gradient never added
    max_chunk: Optional[int] = None  # cap on the heuristic (forces >1 chunk on tiny shapes)
    same_dtype_via_dtype_out: bool = False  # Liger PR #1324: same-dtype accum via addmm.dtype_out
    token_grad_shift: bool = False  # planted bug: reduction="none" upstream grad applied one row off
    amp_no_bias_mm_fp32: bool = False  # planted bug: no-bias branch multiplies the bf16 grad by fp32 w, AMP off
    grad_input_unguarded: bool = False  # planted bug: grad_input written even when x needs no grad
    gw_scale_softcap: float = 1.0  # planted bug: grad_weight's chunk term scaled by this under softcap
    gw_scale_smoothing: float = 1.0  # planted bug: likewise under label smoothing
    grad_filter: float = 0.0  # drop gradient entries with |p - onehot| below it (cut-cross-entropy's filter)


BASE = Variant()


class Opts(NamedTuple):
    ignore_index: int
    lse_square_scale: float
    label_smoothing: float
    reduction: str
    softcap: Optional[float]
    return_z_loss: bool
    accum_dtype: Optional[torch.dtype]
    use_token_scaling: bool
    return_token_accuracy: bool
    return_predicted_tokens: bool


def _cdiv(a, b):
    return (a + b - 1) // b


def _next_pow2(n):
    p = 1
    while p < n:  # plain loop: also works (with guards) on SymInts
        p *= 2
    return p


def chunk_size(BT, H, V, cap=None):
    """Liger's heuristic: bound transient logits (chunk x V) to about BT x H elements."""
    size = min(_next_pow2(_cdiv(BT, _cdiv(V, H))), BT)
    if cap is not None:
        size = min(size, cap)
    return max(size, 1)


def _cuda_sm80(device):
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8


def out_dtype_allowed(device):
    """Where addmm(out_dtype=...) is taken, as Liger gates it (CUDA sm80+).

    CPU eager has no addmm.dtype(_out) kernel, so there the fast path is taken only while
    torch.compile traces: CPU CI then compiles exactly the call that breaks for Liger.
    """
    if device.type == "cuda":
        return _cuda_sm80(device)
    return device.type == "cpu" and torch.compiler.is_compiling()


class Totals(NamedTuple):
    n: torch.Tensor  # int64: non-ignored tokens
    sum_w: Optional[torch.Tensor]  # fp32: sum of class weights of non-ignored targets
    w_sum: Optional[torch.Tensor]  # fp32: sum of all class weights


def totals(target, ce_weight, ignore_index):
    mask = target != ignore_index
    n = mask.sum()
    if ce_weight is None:
        return Totals(n, None, None)
    cw = ce_weight.float()
    # masked multiply instead of masked_select: no data-dependent shapes under compile
    sum_w = (cw[torch.where(mask, target, 0)] * mask).sum()
    return Totals(n, sum_w, cw.sum())


def token_scale(logits, target, o):
    """Detached p(target) in the logits dtype (as Liger computes it), 0 where ignored."""
    lf = logits.detach()
    if o.softcap is not None:
        lf = o.softcap * torch.tanh(lf / o.softcap)
    probs = torch.softmax(lf, dim=-1)
    mask = target != o.ignore_index
    p_y = probs.gather(-1, torch.where(mask, target, 0).unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, p_y, torch.zeros_like(p_y))


def ce_rows(logits, target, ce_weight, o, t, want_grad, variant):
    """Liger's CE kernel for a block of rows, in fp32: (loss, z, acc, pred, dlogits)."""
    x = logits.float()
    if o.softcap is not None:
        th = torch.tanh(x / o.softcap)
        x = o.softcap * th
    V = x.shape[-1]
    mask = target != o.ignore_index
    y = torch.where(mask, target, 0)
    ls, s = o.label_smoothing, o.lse_square_scale
    eps = ls / V
    k = variant.smoothing_scale
    mean = o.reduction == "mean"
    # every row is masked when n == 0, so the clamp only avoids 0/0 in discarded values
    n = t.n.clamp_min(1).float()

    lse = torch.logsumexp(x, dim=-1)
    x_y = x.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    if ce_weight is None:
        loss = lse - x_y
        if ls > 0:
            loss = loss * (1 - ls) + k * (ls * lse - eps * x.sum(-1))
        denom = n
    else:
        cw = ce_weight.float()
        w_y = cw[y]
        loss = w_y * (lse - x_y)
        if ls > 0:
            loss = loss * (1 - ls) + k * (eps * lse * t.w_sum - eps * (x * cw).sum(-1))
        denom = torch.where(t.n > 0, t.sum_w, torch.ones_like(t.sum_w))
    z = s * lse * lse
    if mean:
        loss = loss / denom
        z = z / n  # Liger: z-loss is normalised by the token count, never class-weighted
    loss = torch.where(mask, loss + z, torch.zeros_like(loss))
    z = torch.where(mask, z, torch.zeros_like(z))

    pred = x.argmax(dim=-1)  # first maximal index, like the kernel's running argmax
    acc = ((pred == target) & mask).float()
    pred = torch.where(mask, pred, torch.full_like(pred, -1))
    if not want_grad:
        return loss, z, acc, pred, None

    p = torch.softmax(x, dim=-1)
    onehot = torch.zeros_like(p).scatter_(-1, y.unsqueeze(-1), 1.0)
    if ce_weight is None:
        # = p * (1 + 2 s lse) - eps - (1 - ls) * onehot, Liger's form, when k == 1
        g = (1 - ls) * (p - onehot) + k * (ls * p - eps) + 2 * s * lse.unsqueeze(-1) * p
        if mean:
            g = g / n
    else:
        g = (1 - ls) * w_y.unsqueeze(-1) * (p - onehot) + k * eps * (p * t.w_sum - cw)
        gz = 2 * s * lse.unsqueeze(-1) * p
        if mean:
            g, gz = g / denom, gz / n
        g = g + gz
    if o.softcap is not None:
        g = g * (1 - th * th)
    if variant.grad_filter > 0:  # entry by entry (cce skips whole blocks: a subset of these)
        g = torch.where((p - onehot).abs() < variant.grad_filter, torch.zeros_like(g), g)
    g = torch.where(mask.unsqueeze(-1), g, torch.zeros_like(g))
    return loss, z, acc, pred, g


def accumulate_grad_weight(gw, g_l, x_chunk, variant):
    """grad_weight += g_l^T @ x_chunk, by the same branches as Liger 0.8.5."""
    gt = g_l.t()
    xin = x_chunk if x_chunk.dtype == gt.dtype else x_chunk.to(gt.dtype)
    if gw.dtype == torch.float32 and gt.dtype in LOW_PRECISION and out_dtype_allowed(gw.device):
        # fp32 accumulator, fp16/bf16 operands: the call of Liger issue #1327
        torch.addmm(gw, gt, xin, out_dtype=torch.float32, out=gw)
    elif (
        variant.same_dtype_via_dtype_out
        and gw.dtype == gt.dtype
        and gw.dtype in (*LOW_PRECISION, torch.float32)
        and out_dtype_allowed(gw.device)
    ):
        torch.addmm(gw, gt, xin, out_dtype=gw.dtype, out=gw)
    elif gt.dtype in LOW_PRECISION and gw.dtype == gt.dtype and _cuda_sm80(gw.device):
        torch.addmm(gw, gt, xin, out=gw)
    else:
        paths.note("mm_fallback")
        gw += torch.mm(gt, x_chunk).float()


class Result(NamedTuple):
    loss: torch.Tensor
    z_loss: Optional[torch.Tensor]
    token_accuracy: Optional[torch.Tensor]
    predicted_tokens: Optional[torch.Tensor]
    grad_input: Optional[torch.Tensor]
    grad_weight: Optional[torch.Tensor]
    grad_bias: Optional[torch.Tensor]


def fused(x, w, target, bias, ce_weight, o, variant, need, token_grad=None):
    """One pass over all chunks. need = (grad_input, grad_weight, grad_bias) flags."""
    BT, H = x.shape
    V = w.shape[0]
    cs = chunk_size(BT, H, V, variant.max_chunk)
    n_chunks = _cdiv(BT, cs)
    t = totals(target, ce_weight, o.ignore_index)
    want_grad = any(need)

    grad_input = torch.zeros_like(x) if need[0] else None
    gw_dtype = o.accum_dtype or w.dtype
    grad_weight = torch.zeros_like(w, dtype=gw_dtype) if need[1] else None
    grad_bias = torch.zeros_like(bias, dtype=o.accum_dtype or bias.dtype) if need[2] else None
    loss_1d = torch.zeros(BT, dtype=torch.float32, device=x.device)
    z_1d = torch.zeros(BT, dtype=x.dtype, device=x.device) if o.return_z_loss else None
    acc_1d = torch.zeros(BT, dtype=torch.float32, device=x.device) if o.return_token_accuracy else None
    pred_1d = torch.full((BT,), -1, dtype=torch.int64, device=x.device) if o.return_predicted_tokens else None
    low_acc = None  # planted bug's low-precision accumulator

    for ci in range(n_chunks):
        s, e = ci * cs, min((ci + 1) * cs, BT)
        x_c, t_c = x[s:e], target[s:e]
        logits = x_c @ w.t()
        if bias is not None:
            logits = logits + bias
        scale = token_scale(logits, t_c, o) if o.use_token_scaling else None
        loss_c, z_c, acc_c, pred_c, g = ce_rows(logits, t_c, ce_weight, o, t, want_grad, variant)
        if scale is not None:
            loss_c = loss_c * scale
        loss_1d[s:e] = loss_c
        if z_1d is not None:
            z_c = z_c.to(x.dtype)
            z_1d[s:e] = z_c * scale if scale is not None else z_c
        if acc_1d is not None:
            acc_1d[s:e] = acc_c
        if pred_1d is not None:
            pred_1d[s:e] = pred_c
        if not want_grad or (variant.drop_last_chunk and n_chunks > 1 and ci == n_chunks - 1):
            continue

        if token_grad is not None:  # reduction="none": fold per-token upstream grad in first,
            # in fp32: one rounding into the logits dtype, as for mean/sum (MATH.md item 4)
            tg = token_grad.roll(1) if variant.token_grad_shift else token_grad
            g = g * tg[s:e].unsqueeze(-1).float()
        g_l = g.to(logits.dtype)  # Liger stores the gradient in the logits buffer
        if scale is not None:
            g_l = g_l * scale.unsqueeze(-1)
        if grad_input is not None or variant.grad_input_unguarded:
            grad_input[s:e] = _grad_input_rows(g_l, w, bias, variant)
        if grad_weight is not None:
            if variant.accum_in_logits_dtype and gw_dtype == torch.float32 and g_l.dtype in LOW_PRECISION:
                if low_acc is None:
                    low_acc = torch.zeros_like(w, dtype=g_l.dtype)
                low_acc += torch.mm(g_l.t(), x_c.to(g_l.dtype))
            else:
                accumulate_grad_weight(grad_weight, _planted_gw_scale(g_l, o, variant), x_c, variant)
        if grad_bias is not None:
            grad_bias += g_l.sum(dim=0)

    if low_acc is not None:
        grad_weight = low_acc.float()
    if o.reduction == "none":
        loss, z, acc = loss_1d, z_1d, acc_1d
    else:
        loss = loss_1d.sum()
        z = z_1d.sum() if z_1d is not None else None
        acc = acc_1d.sum() / t.n if acc_1d is not None else None
    return Result(
        loss, z, acc, pred_1d, grad_input,
        grad_weight.to(w.dtype) if grad_weight is not None else None,
        grad_bias.to(bias.dtype) if grad_bias is not None else None,
    )


def _planted_gw_scale(g_l, o, variant):
    """The weight path's gradient, off by a planted factor under softcap or label smoothing."""
    k = 1.0
    if o.softcap is not None:
        k *= variant.gw_scale_softcap
    if o.label_smoothing > 0:
        k *= variant.gw_scale_smoothing
    return g_l if k == 1.0 else g_l * k


def _grad_input_rows(g_l, w, bias, variant):
    """d(loss)/dx for one chunk: g_l @ w (autocast aligns a bf16/fp16 g_l with fp32 w)."""
    dev = w.device.type
    if variant.amp_no_bias_mm_fp32 and bias is None and torch.is_autocast_enabled(dev):
        with torch.autocast(dev, enabled=False):  # the bias branch casts w; this one forgets
            return torch.mm(g_l, w)
    return g_l @ w


def _autocast_state(device_type):
    return (torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type))


def make_function(variant):
    """An autograd.Function bound to one Variant (a class per variant keeps dynamo's view static)."""

    class FusedLinearCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, target, bias, ce_weight, *opts):
            o = Opts(*opts)
            need = (x.requires_grad, w.requires_grad, bias is not None and bias.requires_grad)
            ctx.defer = o.reduction == "none" and any(need)
            ctx.opts, ctx.need = o, need
            ctx.amp = (x.device.type, *_autocast_state(x.device.type))
            r = fused(x, w, target, bias, ce_weight, o, variant, (False,) * 3 if ctx.defer else need)
            if ctx.defer:
                ctx.save_for_backward(x.detach(), w.detach(), target, bias, ce_weight)
            else:
                ctx.save_for_backward(r.grad_input, r.grad_weight, r.grad_bias)
            if r.predicted_tokens is not None:
                ctx.mark_non_differentiable(r.predicted_tokens)
            return r.loss, r.z_loss, r.token_accuracy, r.predicted_tokens

        @staticmethod
        def backward(ctx, g_loss, *_metric_grads):  # z-loss/accuracy/predictions are metrics
            if ctx.defer:
                x, w, target, bias, ce_weight = ctx.saved_tensors
                device_type, enabled, dtype = ctx.amp
                with torch.autocast(device_type, dtype=dtype, enabled=enabled):
                    r = fused(x, w, target, bias, ce_weight, ctx.opts, variant, ctx.need, token_grad=g_loss)
                gi, gw, gb = r.grad_input, r.grad_weight, r.grad_bias
            else:
                gi, gw, gb = ctx.saved_tensors
                gi, gw, gb = (None if v is None else v * g_loss for v in (gi, gw, gb))
            return (gi, gw, None, gb, None) + (None,) * len(Opts._fields)

    FusedLinearCrossEntropy.__name__ = f"FLCE_{variant.name.replace('-', '_')}"
    return FusedLinearCrossEntropy


def subject(variant):
    """The subject-level flce() for one Variant."""
    fn = make_function(variant)

    def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0,
             label_smoothing=0.0, reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None,
             use_token_scaling=False, return_token_accuracy=False, return_predicted_tokens=False):
        return fn.apply(x, w, target, bias, ce_weight, ignore_index, lse_square_scale, label_smoothing,
                        reduction, softcap, return_z_loss, accum_dtype, use_token_scaling,
                        return_token_accuracy, return_predicted_tokens)

    return flce


def supports_flce_only(case):
    if case.get("kind", "flce") != "flce":
        return "op kinds are run by aten-dtype-out, not by an FLCE subject"
    return None


# --- the `model` subject itself ---
VERSION = "flce-model-1"
# Liger-Kernel's documented semantics: flce's own Liger-shaped FLCE follows them (contract.py).
CONTRACT = {"semantics": "liger",
            "source": "Liger-Kernel 0.8.5 LigerFusedLinearCrossEntropyLoss: all-ignored mean 0, fp32 loss"}
flce = subject(BASE)


def version():
    return VERSION


def supports(case):
    return supports_flce_only(case)
