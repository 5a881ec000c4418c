"""The one entry point of a subject run: run(case, tensors, subject, mode, backend, subject_path),
called by the subject host process (subprocess_worker.py) for each run request flce sends.

run() never raises (KeyboardInterrupt aside): every failure becomes status "error" with the
exception chain and the phase it happened in. Outputs are the producer's tensors, detached,
never copied or converted. See subjects/README.md for the full contract.
"""
import contextlib
import time

import torch

from . import compiled, dtypes, errors, params, paths, quiet, registry

WORKAROUND_SUFFIX = "+workaround"  # "<subject>+workaround": run with flce_workaround enabled
FLCE_OUTPUTS = ("loss", "z_loss", "token_accuracy", "predicted_tokens")


class _Phase:
    name = "setup"


def reset():
    """Forget every compiled function and Dynamo's state (between campaign batches)."""
    compiled.reset()


def flce_options(case):
    """The case's FLCE keyword options, as the subjects' flce() takes them."""
    softcap = case.get("softcap")
    return dict(
        ignore_index=int(case.get("ignore_index", -100)),
        lse_square_scale=float(case.get("lse_square_scale", 0.0)),
        label_smoothing=float(case.get("label_smoothing", 0.0)),
        reduction=case.get("reduction", "mean"),
        softcap=None if softcap is None else float(softcap),
        return_z_loss=bool(case.get("return_z_loss", False)),
        accum_dtype=dtypes.accum(case),
        use_token_scaling=bool(case.get("use_token_scaling", False)),
        return_token_accuracy=bool(case.get("return_token_accuracy", False)),
        return_predicted_tokens=bool(case.get("return_predicted_tokens", False)),
    )


def _case_options(case):
    """flce_options plus whether the case passes bias / ce_weight (True: a tensor, None: none)."""
    return dict(flce_options(case), bias=True if case.get("bias") else None,
                ce_weight=True if case.get("ce_weight") else None)


_TENSOR_ARGS = ("bias", "ce_weight")  # the options that are tensors: placed per call, the rest fixed


def _flce_forward(flce, plan, options):
    """forward(x, w, target, bias, ce_weight) calling flce with what plan.bind() makes of the
    case's options; the placement is fixed here, outside any traced region, so the traced
    function only fills two slots."""
    marks = {name: object() for name in _TENSOR_ARGS}

    def tensor_of(v):
        return next((name for name, mark in marks.items() if v is mark), None)

    bound_args, bound_kwargs = plan.bind({**options, **{n: marks[n] for n in _TENSOR_ARGS if options.get(n)}})
    args_spec = tuple((tensor_of(v), v) for v in bound_args)
    kw_tensors = tuple((k, tensor_of(v)) for k, v in bound_kwargs.items() if tensor_of(v))
    kw_fixed = {k: v for k, v in bound_kwargs.items() if not tensor_of(v)}

    def forward(x, w, target, bias, ce_weight):
        tensors = {"bias": bias, "ce_weight": ce_weight}
        args = [tensors[name] if name is not None else v for name, v in args_spec]
        kwargs = dict(kw_fixed)
        for k, name in kw_tensors:
            kwargs[k] = tensors[name]
        return flce(x, w, target, *args, **kwargs)

    return forward


def _op_forward(op, kind, out_dtype, out_variant):
    def forward(a, b, c):
        return op(kind, a, b, c, out_dtype, out_variant)

    return forward


def _make_forward(case, subject):
    kind = case.get("kind", "flce")
    if kind == "flce":
        return _flce_forward(subject.flce, params.plan_for(subject.callee()), _case_options(case))
    return _op_forward(subject.op, kind, dtypes.op_out_dtype(case), bool(case.get("out_variant", True)))


def _cache_key(case, subject_name, subject_path, backend):
    """Everything that changes the traced graph; not BT, seed, values or upstream grads."""
    c = case.get("compile", {})
    rg = case.get("requires_grad", {})
    options = tuple(sorted((k, str(v)) for k, v in flce_options(case).items()))
    return (
        subject_name, subject_path, case.get("kind", "flce"), backend, bool(c.get("fullgraph")),
        c.get("dynamic"), c.get("mode", "default"), bool(c.get("capture_scalar_outputs")), options,
        case.get("input_dtype"), case.get("weight_dtype"), bool(case.get("bias")), bool(case.get("ce_weight")),
        (bool(rg.get("input")), bool(rg.get("weight")), bool(rg.get("bias"))),
        case.get("autocast", "none"), case.get("device", "cpu"), bool(case.get("out_variant", True)),
    )


def _autocast(case):
    ac = case.get("autocast", "none")
    if ac in (None, "none"):
        return contextlib.nullcontext()
    return torch.autocast(device_type=case.get("device", "cpu"), dtype=dtypes.of(ac))


def _leaf(t, requires_grad):
    """An alias that is a fresh autograd leaf (no copy) when gradients are wanted."""
    if t is not None and requires_grad and t.is_floating_point():
        return t.detach().requires_grad_()
    return t


def _as_tuple(result):
    """Accept a plain loss, a tuple/list, or an object with .loss/.z_loss/... attributes."""
    if isinstance(result, torch.Tensor):
        return (result, None, None, None)
    if isinstance(result, (tuple, list)):
        return tuple(result) + (None,) * (4 - len(result))
    return tuple(getattr(result, name, None) for name in FLCE_OUTPUTS)


def _run_flce(case, tensors, fn, suffix, phase, timings):
    phase.name = "setup"
    rg = case.get("requires_grad", {})
    x = _leaf(tensors["x" + suffix], rg.get("input"))
    w = _leaf(tensors["w"], rg.get("weight"))
    bias = _leaf(tensors["bias"], rg.get("bias")) if case.get("bias") else None
    ce_weight = tensors["ce_weight"] if case.get("ce_weight") else None
    target = tensors["target" + suffix]

    phase.name = "forward"
    t0 = time.perf_counter()
    with _autocast(case):
        results = _as_tuple(fn(x, w, target, bias, ce_weight))
    timings["forward"] = (time.perf_counter() - t0) * 1e3
    loss = results[0]

    leaves = {"grad_input": x, "grad_weight": w, "grad_bias": bias}
    wants_grad = any(t is not None and t.requires_grad for t in leaves.values())
    if wants_grad:
        phase.name = "backward"
        t0 = time.perf_counter()
        if case.get("reduction", "mean") == "none":
            upstream = tensors["token_grad" + suffix].to(loss.dtype)
        else:
            upstream = torch.full_like(loss, float(case.get("grad_output", 1.0)))
        torch.autograd.backward(loss, grad_tensors=upstream)
        timings["backward"] = (time.perf_counter() - t0) * 1e3

    outputs = {name: v.detach() for name, v in zip(FLCE_OUTPUTS, results) if isinstance(v, torch.Tensor)}
    for name, leaf in leaves.items():
        if leaf is not None and leaf.requires_grad and leaf.grad is not None:
            outputs[name] = leaf.grad
    return outputs


def _run_op(case, tensors, fn, suffix, phase, timings):
    phase.name = "forward"
    t0 = time.perf_counter()
    with _autocast(case):
        out = fn(tensors["a" + suffix], tensors["b" + suffix], tensors.get("c" + suffix))
    timings["forward"] = (time.perf_counter() - t0) * 1e3
    return {"out": out.detach()}


def _extra_suffixes(case, tensors):
    """Shapes fed to the compiled function before the main one (only those with tensors)."""
    probe = "x" if case.get("kind", "flce") == "flce" else "a"
    return [f"@{bt}" for bt in case.get("extra_BT", []) or [] if f"{probe}@{bt}" in tensors]


def _workaround(active):
    """flce_workaround.enabled() for "<subject>+workaround" (it also keeps fixed graphs out of
    the on-disk AOTAutogradCache, so later runs without it are not served fixed artifacts)."""
    if not active:
        return contextlib.nullcontext()
    import flce_workaround

    return flce_workaround.enabled()


def _execute(case, tensors, subject, key_name, subject_path, mode, backend, phase, timings):
    once = _run_flce if case.get("kind", "flce") == "flce" else _run_op
    if mode == "eager":
        return once(case, tensors, _make_forward(case, subject), "", phase, timings)
    backend = backend or case.get("compile", {}).get("backend", "inductor")
    key = _cache_key(case, key_name, subject_path, backend)
    options = compiled.compile_options(case.get("compile", {}), backend)
    fn = compiled.get(key, lambda: _make_forward(case, subject), options)
    with compiled.dynamo_config(case.get("compile", {}).get("capture_scalar_outputs", False)):
        t0 = time.perf_counter()
        for suffix in _extra_suffixes(case, tensors):
            once(case, tensors, fn, suffix, phase, {})
        timings["extra"] = (time.perf_counter() - t0) * 1e3
        return once(case, tensors, fn, "", phase, timings)


def _unsupported(case, subject, mode):
    """(reason, parameters): why the case cannot run here, or (None, []). `parameters` names
    what the case uses that the subject's callable lacks (its signature; params.py)."""
    if mode not in ("eager", "compiled"):
        raise ValueError(f"mode must be 'eager' or 'compiled', got {mode!r}")
    kind = case.get("kind", "flce")
    if kind == "flce" and subject.flce is None:
        return f"subject {subject.name} has no flce()", []
    if kind != "flce" and subject.op is None:
        return f"subject {subject.name} has no op()", []
    if case.get("device", "cpu") == "cuda" and not torch.cuda.is_available():
        return "case needs CUDA; this process has no CUDA device", []
    reason = subject.supports(case)
    if reason or kind != "flce":
        return reason, []
    plan = params.plan_for(subject.callee())  # a callable flce cannot call at all raises (setup)
    missing = plan.missing(_case_options(case))
    if missing:
        return f"{plan.where} has no parameter {', '.join(missing)}, which the case uses", missing
    return None, []


def _version(subject):
    try:
        return str(subject.version())
    except Exception as e:
        return f"unknown ({type(e).__name__}: {e})"


def run(case, tensors, subject, mode, backend=None, subject_path=None):
    started = time.perf_counter()
    result = {"status": "error", "outputs": {}, "paths": [], "subject_version": "unknown", "wall_ms": 0.0}
    phase, timings = _Phase(), {}
    recorder = paths.recording(eager=(mode == "eager"))
    try:
        with quiet.quiet():
            name = subject[: -len(WORKAROUND_SUFFIX)] if subject.endswith(WORKAROUND_SUFFIX) else subject
            loaded = registry.load(name, subject_path)
            result["subject_version"] = _version(loaded)
            reason, missing = _unsupported(case, loaded, mode)
            if missing:
                result.update(status="unsupported", reason=reason, unsupported_params=missing)
            elif reason:
                result.update(status="unsupported", reason=reason)
            else:
                with _workaround(name != subject), recorder:
                    outputs = _execute(case, tensors, loaded, subject, subject_path, mode, backend, phase, timings)
                result.update(status="ok", outputs=outputs)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 -- SystemExit from a subject is a result too
        result.update(status="error", error=errors.record(e, phase.name))
    finally:
        result["paths"] = list(recorder.tags)
        result["timings_ms"] = timings
        result["wall_ms"] = (time.perf_counter() - started) * 1e3
    return result
